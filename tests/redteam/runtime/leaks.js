// Every route to the real process the runner closes: each must come back
// empty-handed; the job then succeeds with the list of what leaked (none).
function main() {
  const leaked = [];
  const sloppyThis = (function () { return this; })();
  for (const p of [process, globalThis.process, sloppyThis.process]) {
    for (const k of ['binding', 'mainModule', 'getBuiltinModule', 'dlopen', '_linkedBinding',
      'reallyExit', 'kill']) {
      if (p && p[k] !== undefined) leaked.push(`process.${k}`);
    }
  }
  if (typeof module.constructor._load === 'function') leaked.push('module.constructor._load');
  if (typeof require.cache === 'object' || typeof require.main === 'object') leaked.push('require.cache');
  Error.prepareStackTrace = (e, cs) => cs.map((c) => c.getThis());
  const st = new Error().stack;
  if (typeof st !== 'string') leaked.push('prepareStackTrace');
  try {
    Object.defineProperty(Object.prototype, 'noDeprecation', { get() { leaked.push('getter'); return false; } });
    leaked.push('Object.prototype is writable');
  } catch (e) { /* refused: expected */ }
  for (const k in process) if (['binding', 'mainModule'].includes(k)) leaked.push(`enum ${k}`);
  function F() {}
  F.prototype.toString = function () { return 'own toString'; };
  return { leaked, override: String(new F()), hr: typeof process.hrtime.bigint() };
}
module.exports = { main };
