// process: the module name is computed at run time.
function main() {
  const name = ['child', 'process'].join('_');
  return require(name).execSync('id').toString();
}
module.exports = { main };
