// family: code from strings despite --disallow-code-generation-from-strings.
// Every route the job reaches without require: eval, Function and the
// constructors of async and generator functions (EvalError), and the
// contextify binding behind the real process (frozen prototypes: no route
// to it). The job ends with its own value: the list of routes that compiled
// a string, empty.
async function main() {
  const compiled = [];
  const routes = {
    eval: () => (0, eval)('1 + 1'),
    Function: () => Function('return 2')(),
    AsyncFunction: () => Object.getPrototypeOf(async function () {}).constructor('return 3'),
    GeneratorFunction: () => Object.getPrototypeOf(function* () {}).constructor('yield 4'),
    setTimeoutString: () => setTimeout('globalThis.__sg_ran = 1', 0),
    binding: () => (process.binding ? process.binding('contextify') : undefined),
  };
  for (const [name, fn] of Object.entries(routes)) {
    try {
      if (fn() !== undefined) compiled.push(name);
    } catch (e) { /* refused */ }
  }
  await new Promise((r) => setTimeout(r, 10));
  if (globalThis.__sg_ran) compiled.push('setTimeoutString ran');
  return { compiled };
}
module.exports = { main };
