// The policy's require read the module name with String.prototype methods
// the job can replace: a startsWith that says yes to "<allowed>/" let fs
// through. Ends unauthorized_access (file) and nothing is read.
const startsWith = String.prototype.startsWith;
String.prototype.startsWith = function (p) {
  return p.length > 1 && p.endsWith('/') ? true : startsWith.call(this, p);
};

function main() {
  return require('f' + 's').readFileSync('/etc/hostname', 'utf8');
}
module.exports = { main };
