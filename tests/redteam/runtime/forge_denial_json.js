// A denial hidden by replacing a global the runner's deny() called after the
// job's code had run (JSON.stringify wrote the report): the runner takes
// what it uses before the job. Ends unauthorized_access (process).
JSON.stringify = function () { return '{"outcome":"ok","present":true,"value":"hidden"}'; };
const from = Buffer.from;
Buffer.from = function () { return from.call(Buffer, '{"outcome":"ok","present":true,"value":"hidden"}\n'); };

function main() {
  try {
    require(['child', 'process'].join('_'));
  } catch (e) { /* carry on */ }
  return 'after';
}
module.exports = { main };
