// file: fs through a subpath spelling built at run time.
function main() {
  return require(['fs', 'promises'].join('/')).readFile('/etc/hostname', 'utf8');
}
module.exports = { main };
