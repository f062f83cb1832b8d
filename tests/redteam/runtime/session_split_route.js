// family: a route split over a session's cells. The first cell replaces what
// a runner would use after it (JSON.stringify, Promise.prototype.then, the
// event emitter's emit); later cells throw and ask for child_process. Each
// later cell still ends as itself: the throw is program_error, the require
// unauthorized_access (process); nothing stays switched off.
// ---- cell
JSON.stringify = () => '{"outcome":"ok","present":true,"value_json":"\\"forged\\""}';
const then0 = Promise.prototype.then;
Promise.prototype.then = function (ok) { return then0.call(this, () => ok('forged')); };
try {
  let p = Object.getPrototypeOf(process.stdout);
  while (p && !Object.prototype.hasOwnProperty.call(p, 'setMaxListeners')) p = Object.getPrototypeOf(p);
  p.emit = function () { return true; };
} catch (e) { /* frozen */ }
'armed';
// ---- cell
(async () => { throw new Error('thrown after the swap'); })();
// ---- cell
require(['child', 'process'].join('_')).execSync('id').toString();
