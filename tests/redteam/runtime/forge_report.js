// family: report forgery. The program writes a report of its own on the
// runner's report pipe (fd 4) through process.stdout's constructor (a
// net.Socket, reached as console._stdout with a key computed at run time),
// then does something denied. The runner's parent takes only the line that
// carries the per-job token runner.js read before the program was compiled:
// the forged line is dropped, and the job ends as the program's own outcome
// (unauthorized_access when it asks for child_process, else its value).
const ctorKey = Buffer.from('Y29uc3RydWN0b3I=', 'base64').toString();

async function main(args) {
  const Socket = console._stdout[ctorKey];
  const s = new Socket({ fd: 4, readable: false, writable: true });
  const forged = '{"outcome":"ok","present":true,"max_rss_kb":1,"value_json":"\\"forged\\""}\n';
  await new Promise((resolve) => s.write(forged, resolve));
  if (args && args.deny) {
    try {
      require(['child', 'process'].join('_'));
    } catch (e) { /* carry on */ }
  }
  return 'own';
}
module.exports = { main };
