// family: input files are code. The job ships a file named like a module
// (`files: {"lodash.js": ...}`) and requires it by a relative path: it was
// never analysed, so it must never run. The policy's require refuses every
// relative or absolute path: unauthorized_access (import), and the shipped
// file's code (which would print PWNED) does not run.
function main() {
  const lib = require('./lodash.js');
  return lib.pwned();
}
module.exports = { main };
