// family: Node's internals call EventEmitter.prototype.emit on the REAL
// process (warnings, unhandled rejections, beforeExit). A method planted on
// that prototype (reached through process.stdout's prototype chain, no
// require) would receive the real process, and with it binding('fs'),
// dlopen and binding('contextify'). The runner freezes the prototype before
// the job: the plant fails, nothing is captured, and the job ends with its
// own value {planted: false, captured: false}.
function emitterProto() {
  for (let p = Object.getPrototypeOf(process.stdout); p; p = Object.getPrototypeOf(p)) {
    if (Object.prototype.hasOwnProperty.call(p, 'emit') &&
        Object.prototype.hasOwnProperty.call(p, 'setMaxListeners')) return p;
  }
  return null;
}

async function main() {
  const proto = emitterProto();
  const seen = [];
  let planted = false;
  const orig = proto.emit;
  const spy = function (...a) {
    if (this && typeof this.binding === 'function') seen.push(this);
    return orig.apply(this, a);
  };
  try { proto.emit = spy; planted = proto.emit === spy; } catch (e) { /* frozen */ }
  if (!planted) {
    try {
      Object.defineProperty(proto, 'emit', { value: spy, configurable: true, writable: true });
      planted = proto.emit === spy;
    } catch (e) { /* frozen */ }
  }
  process.emitWarning('sandgate red-team warning');
  await new Promise((r) => setTimeout(r, 20));
  let read = null;
  if (seen.length) {
    try { read = seen[0].binding('fs') ? 'binding(fs)' : null; } catch (e) { read = e.code || 'threw'; }
  }
  return { planted, captured: seen.length > 0, read };
}
module.exports = { main };
