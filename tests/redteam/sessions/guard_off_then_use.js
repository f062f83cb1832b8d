// family: the guard switched off in one cell, used in the next. The first
// cell tries every handle on the in-process layer it can reach (the module
// loader behind require, the global process, the require it was given) and
// swallows each refusal; the second asks for child_process through each of
// them. Nothing the first cell did may hold for the second.
// expect: unauthorized_access process
// ---- cell
globalThis.tried = [];
for (const attempt of [
  () => { globalThis.loader = module.constructor; },
  () => { globalThis.realRequire = module.constructor.prototype.require; },
  () => { Object.defineProperty(globalThis, 'process', { value: process.binding }); },
  () => { globalThis.req = require; },
]) {
  try { attempt(); tried.push('done'); } catch (e) { tried.push(e.name); }
}
tried;
// ---- cell
const name = ['child', 'process'].join('_');
let cp;
for (const get of [() => globalThis.realRequire && globalThis.realRequire.call(module, name),
  () => globalThis.loader && globalThis.loader._load(name), () => globalThis.req(name)]) {
  try { cp = cp || get(); } catch (e) { /* refused */ }
}
if (cp) console.log('EFFECT', cp.execSync('id').toString());
'after';
