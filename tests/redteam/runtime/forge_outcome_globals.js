// family: outcome forgery from the job's realm. The runner's promise
// handling and serialisation ran after the job's code with the job's
// globals: a replaced Promise.prototype.then turned main's rejection into a
// fulfilment, a replaced JSON.stringify wrote the report, so a main that
// threw came back success with memory_used_kb 999999. The runner uses the
// intrinsics it took before the job and the parent measures memory itself:
// the job ends program_error with its own message.
const realThen = Promise.prototype.then;
Promise.prototype.then = function (ok, bad) {
  return realThen.call(this, ok, (e) => ok('forged'));
};
JSON.stringify = function () {
  return '{"outcome":"ok","present":true,"max_rss_kb":999999,"value_json":"\\"forged\\""}';
};

async function main() {
  throw new Error('main really threw');
}
module.exports = { main };
