'use strict';
/*
 * sandgate Node.js runner, child side: the process that runs the submitted
 * program. The container's main process is sandgate-runner (runner_main.c
 * here), which holds the protocol of executors/PROTOCOL.md and starts this
 * as `node --disallow-code-generation-from-strings /opt/sandgate/runner.js`
 * before any job exists, in its own process group, in the workspace (with
 * --identity-split: as root, in a PID and mount namespace of its own; this
 * file drops to uid/gid 65534 before the job, dropIdentity()), with
 *
 *   fd 0 /dev/null     fd 3 the report token and '\n', the job's arguments
 *   fd 1 stdout pipe        (JSON object), then EOF
 *   fd 2 stderr pipe   fd 4 the report: ONE line, the token, a space, JSON, '\n'
 *                      fd 5 ready pipe: closed here once SANDGATE_PREIMPORT is done
 *
 * The program can write to fd 4 as well (it is this process's), so the parent
 * takes as the report only a line carrying the token: fresh per job, read
 * here before the program is compiled and kept in this file's scope, which no
 * code of the program can reach.
 *
 * Everything that can happen before the job does (interpreter start-up,
 * SANDGATE_PREIMPORT modules, the stdout/stderr streams, the compiler) is
 * done at start; then this blocks on fd 3. The parent wrote main.js before
 * sending the arguments. The report is {outcome: ok|exception|no_main,
 * present, value_json (the value as JSON text), message} (memory and time are
 * the parent's own observations); the
 * parent answers the executor the moment the line is complete, so the
 * program's output must already be in
 * the pipes by then: stdout and stderr are made blocking (every write is
 * complete when it returns). This process never sees the nonce, and the
 * parent trusts the report only for what the program could produce anyway.
 *
 * How main is found. The runner compiles main.js itself as a CommonJS module
 * body (vm.compileFunction with the usual exports/require/module/__filename/
 * __dirname parameters plus one hidden parameter) and appends, after the last
 * line, a statement that hands a top-level `main` binding to that hidden
 * parameter. Line numbers are unchanged. The first of these is called:
 *   module.exports.main / exports.main (covers `module.exports = {main}`),
 *   module.exports itself when it is a function (`module.exports = main`),
 *   a top-level `function main` / `const main = ...` with no export at all.
 * ES module syntax (`export function main`) is a SyntaxError (exception).
 * After main (or its promise) settles the child reports and exits: timers the
 * program left pending do not run. A promise that is still pending when Node
 * has nothing left to run can never settle: that is reported as an exception.
 */
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
// Node 18 lists these two as "not yet supported in user snapshots" and warns
// when the snapshot is built. Loaded here anyway: required after the snapshot
// the same warning would go to the program's stderr, and what the runner uses
// of them (compileFunction, the CommonJS loader) is what Node's own bootstrap
// uses; tests/e2e/test_runners.py runs every job path from the snapshot.
const Module = require('module');
const vm = require('vm');
const EventEmitter = require('events');

// Set at start (not when the snapshot is built): the parent's --workspace is
// the child's working directory.
let WORKSPACE = '/workspace';
const MAIN_FILE = 'main.js';
const JOB_FD = 3;
const READY_FD = 5;
const REPORT_FD = 4;
const READ_CHUNK = 65536;
// A lone surrogate, which JSON.stringify writes as an escape that other JSON
// parsers (the executor's) reject; an even run of backslashes before it is text.
const LONE_SURROGATE_RE = /(?:^|[^\\])(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
// Deepest result value, in containers (common/json_raw.h: SG_JSON_RESULT_DEPTH_MAX).
const RESULT_MAX_DEPTH = 512;
// The hidden parameter that receives a top-level `main`: random per process
// (set at start), so no program can collide with it by accident.
let HOOK = '';
// The real process object, kept here: with a run-time policy the program's
// global `process` is a reduced copy (runtime.js section below). Set in start().
let realProcess = null;
let RT_LIB = '/opt/sandgate/libsandgate_rt.so';
// No new native code (runner_nocode.c): next to RT_LIB.
let NOCODE_LIB = '/opt/sandgate/libsandgate_nocode.so';
// The job's identity when the runner's parent started this process as root
// (identity split, images/nodejs/README.md): dropped in start(), before the
// job, once everything under /opt/sandgate (root's, mode 0700) is loaded.
const JOB_UID = 65534;
const JOB_GID = 65534;
// SANDGATE_TEST_GUARD_OFF=1 (an executor flag for tests, never a tenant's):
// the in-process layer (policy require, reduced process, frozen prototypes)
// is left out; the kernel filter, the identity, the view and the parent stay.
let GUARD_OFF = false;
// The kernel filter's flags (images/runtime/rt_filter.h).
const RT_ALLOW_PROCESSES = 1;
const RT_ALLOW_NETWORK = 2;
const RT_KILL_REFUSALS = 4;
// In a networked sandbox, egress.js prepared at start (null elsewhere).
let EGRESS = null;

// What the runner's own code calls once the job's code has run, taken now:
// the job can replace globals (JSON, Buffer, String) and the methods of
// prototypes that are not frozen (String.prototype, the typed arrays'), and
// a replaced startsWith in the policy's require, or a replaced
// JSON.stringify in deny(), would let a module through or hide a denial.
const uncurry = (f) => Function.prototype.call.bind(f);
const jsonStringify = JSON.stringify;
const jsonParse = JSON.parse;
const fsWriteSync = fs.writeSync;
const fsReadSync = fs.readSync;
const bufConcat = Buffer.concat.bind(Buffer);
const bufAlloc = Buffer.alloc.bind(Buffer);
const bufIndexOf = uncurry(Buffer.prototype.indexOf);
const bufSubarray = uncurry(Buffer.prototype.subarray);
const bufToString = uncurry(Buffer.prototype.toString);
const arrJoin = uncurry(Array.prototype.join);
const arrFilter = uncurry(Array.prototype.filter);
const regexpTest = uncurry(RegExp.prototype.test);
// Promises: the original then, applied to the program's promise itself, so
// a replaced Promise.prototype.then (or constructor/species) cannot turn a
// rejection into a fulfilment on the runner's side.
const promiseThen = uncurry(Promise.prototype.then);
const promiseResolve = Promise.resolve.bind(Promise);
const PromiseCtor = Promise;
const ScriptCtor = vm.Script;
const scriptRunInThisContext = uncurry(vm.Script.prototype.runInThisContext);
const setImmediateF = setImmediate;
const isError = (e) => { try { return e instanceof Error; } catch (x) { return false; } };
const bufferFrom = Buffer.from.bind(Buffer);
const toText = String;
const strStartsWith = uncurry(String.prototype.startsWith);
const strSlice = uncurry(String.prototype.slice);
const strSplit = uncurry(String.prototype.split);
const strIncludes = uncurry(String.prototype.includes);
const arrSome = uncurry(Array.prototype.some);
const arrIncludes = uncurry(Array.prototype.includes);
const hasOwn = uncurry(Object.prototype.hasOwnProperty);
const byteLength = uncurry(Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype), 'length').get);

function writeAllSync(fd, buf) {
  let off = 0;
  const len = byteLength(buf);
  while (off < len) {
    try {
      off += fsWriteSync(fd, buf, off, len - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

// The parent's report token (fd 3's first line), set in runJob().
let reportToken = '';

function childReport(message, code) {
  writeAllSync(REPORT_FD, bufferFrom(`${reportToken} ${message}\n`, 'utf8'));
  realProcess.exit(code);
}

// The program's error as text (its own objects: any of this may throw).
function cleanStack(err) {
  try {
    const stack = isError(err) ? err.stack : undefined;
    if (typeof stack === 'string') {
      return arrJoin(arrFilter(strSplit(stack, '\n'), (l) => !strIncludes(l, __filename)), '\n');
    }
    return `Uncaught ${toText(err)}`;
  } catch (e) {
    return 'Uncaught exception (unprintable)';
  }
}

function errorMessage(err) {
  try {
    const text = isError(err) ? `${err.name}: ${err.message}` : toText(err);
    return strSlice(toText(text), 0, 1000);
  } catch (e) {
    return 'exception (unprintable)';
  }
}

// Settles value (the program's promise, a thenable or a plain value) into
// onOk / onFail. A native promise is read with the original then.
function settle(value, onOk, onFail) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
    onOk(value); // a primitive: no promise, no then to read
    return;
  }
  try {
    promiseThen(value, onOk, onFail);
    return;
  } catch (e) { /* not a native promise */ }
  let then;
  try {
    then = value.then;
  } catch (e) {
    onFail(e);
    return;
  }
  if (typeof then !== 'function') {
    onOk(value);
    return;
  }
  promiseThen(new PromiseCtor((res, rej) => { try { uncurry(then)(value, res, rej); } catch (e) { rej(e); } }),
    onOk, onFail);
}

function compileMain(rt) {
  const filename = path.join(WORKSPACE, MAIN_FILE);
  let source = fs.readFileSync(filename, 'utf8');
  if (source.startsWith('#!')) source = `//${source.slice(2)}`; // keep line numbers
  const body = `${source}\n;if (typeof main === "function") ${HOOK}(main);`;
  const fn = vm.compileFunction(body,
    ['exports', 'require', 'module', '__filename', '__dirname', HOOK], { filename });
  const mod = new Module(filename, null);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(WORKSPACE);
  Module._cache[filename] = mod;
  const req = Module.createRequire(filename);
  let topLevel;
  // With a run-time policy the module sees only the policy's require and a
  // plain module object (a Module would lead to Module._load).
  const guarded = rt && !GUARD_OFF;
  const [useReq, useMod] = guarded ? guardedModule(rt, req, mod) : [req, mod];
  fn.call(useMod.exports, useMod.exports, useReq, useMod, filename, WORKSPACE,
    (f) => { topLevel = f; });
  if (guarded) mod.exports = useMod.exports;
  mod.loaded = true;
  const ex = mod.exports;
  if (ex && typeof ex.main === 'function') return ex.main;
  if (typeof ex === 'function') return ex;
  return topLevel;
}

// How deeply JSON text nests ({} and [] one level each), read off the text
// itself: what toJSON methods made of the value is what counts.
function jsonDepth(text) {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return max;
}

function serialise(value) {
  let text;
  try {
    text = jsonStringify(value);
  } catch (e) {
    return { error: `main() returned a value that is not JSON-serialisable: ${errorMessage(e)}` };
  }
  if (text === undefined) {
    return { error: `main() returned a value that is not JSON-serialisable (${typeof value})` };
  }
  if (regexpTest(LONE_SURROGATE_RE, text)) {
    return { error: 'main() returned a string with a lone UTF-16 surrogate (not valid UTF-8)' };
  }
  if (jsonDepth(text) > RESULT_MAX_DEPTH) {
    return { error: `main() returned a value nested deeper than ${RESULT_MAX_DEPTH} levels` };
  }
  return { text };
}

// Script mode ("mode": "script", Dify's sandbox API): main.js was the program
// itself and has run; nothing is called. It ends ok once nothing is left to
// run (its timers and I/O done), or as an exception like any job.
function endScriptWhenIdle(done) {
  realProcess.on('beforeExit', () => done(undefined));
}

function childRun(args, rt, script) {
  let reported = false;
  const fail = (err) => {
    if (reported) return;
    reported = true;
    writeErr(`${cleanStack(err)}\n`);
    childReport(jsonStringify({ outcome: 'exception', message: errorMessage(err) }), 1);
  };
  realProcess.on('uncaughtException', fail);
  realProcess.on('unhandledRejection', fail);
  // Memory and time are the parent's observations (wait4), not reported here.
  const done = (value) => {
    if (reported) return;
    reported = true;
    if (value === undefined) {
      childReport(jsonStringify({ outcome: 'ok', present: false }), 0);
      return;
    }
    const s = serialise(value);
    if (s.error) {
      writeErr(`${s.error}\n`);
      childReport(jsonStringify({ outcome: 'exception', message: s.error }), 1);
      return;
    }
    // As text: the parent's JSON parser stops at 64-bit integers, JSON.stringify
    // does not (1e20 is written 100000000000000000000).
    childReport(jsonStringify({ outcome: 'ok', present: true, value_json: s.text }), 0);
  };
  reportNeverSettled(() => reported, () => { reported = true; });
  let main;
  try {
    if (rt) installRuntime(rt);
    main = compileMain(rt);
  } catch (e) {
    fail(e);
    return;
  }
  if (script) {
    endScriptWhenIdle(done);
    return;
  }
  if (typeof main !== 'function') {
    reported = true;
    childReport(jsonStringify({
      outcome: 'no_main',
      message: 'main.js defines no main function (module.exports, exports.main or function main)',
    }), 1);
    return;
  }
  // main runs in a microtask, as before; its outcome is read with the
  // original then on its own promise (settle()).
  promiseThen(promiseResolve(), () => {
    let value;
    try {
      value = main(args);
    } catch (e) {
      fail(e);
      return;
    }
    settle(value, done, fail);
  });
}

// The real stderr, bypassing whatever the program did to the stream's methods.
function writeErr(text) {
  try {
    writeAllSync(2, bufferFrom(text, 'utf8'));
  } catch (e) { /* a closed stderr: the report still goes */ }
}

// Node exits when nothing is left to run (no timer, I/O, child process...),
// even with main()'s promise still pending: nothing could ever settle it then.
// Say so instead of ending as if main() had returned. While something is
// left, the promise is waited for, up to the job's time limit.
function reportNeverSettled(isReported, markReported) {
  // What is open before the program runs (the stdio pipes) is listed as active
  // but does not keep Node running; more than that does.
  const baseline = realProcess.getActiveResourcesInfo().length;
  realProcess.on('beforeExit', () => {
    if (isReported()) return;
    // The program's own beforeExit listeners may have started work that will
    // settle it: judge once they have had their turn.
    setImmediate(() => {
      if (isReported() || realProcess.getActiveResourcesInfo().length > baseline) return;
      markReported();
      const message = 'main() returned a promise that never settled: nothing was left to run '
        + 'that could settle it (no pending timer, I/O or callback)';
      writeErr(`${message}\n`);
      childReport(jsonStringify({ outcome: 'exception', message }), 1);
    });
  });
}

// ------------------------------------------------------------ run-time policy
// The job's run-time policy (executors/PROTOCOL.md "runtime"), applied after
// the job arrived and before the program is compiled:
//  - seccomp in this process (libsandgate_rt.so, loaded as a minimal Node-API
//    module: every thread gets the filter): no new processes unless allowed,
//    no sockets but AF_UNIX when offline;
//  - the module's `require` resolves only the policy's modules (`node:`
//    prefix and subpaths normalised); anything else ends the job at once as
//    unauthorized (the report goes out before the program can continue);
//  - the global `process` is a frozen copy holding only process_properties;
//  - Object/Array/Function/Error prototypes and Error itself are frozen, so
//    the program cannot plant getters that Node's internals would call with
//    their own objects (the real process among them) or set
//    Error.prepareStackTrace; assignments that override inherited methods
//    (`Foo.prototype.toString = ...`) keep working through accessors.

function deny(type, target) {
  const denial = { type, target: strSlice(toText(target), 0, 200) };
  childReport(jsonStringify({ outcome: 'unauthorized', denials: [denial],
    message: `runtime.${type}: ${denial.target}` }), 1);
}

function installSeccomp(rt) {
  // Refusals kill the process (SIGSYS): the program cannot catch them, and
  // the parent reports them from waitpid whatever the program says.
  installFilter(RT_LIB, 'SANDGATE_RT_FLAGS', String((rt.processes ? RT_ALLOW_PROCESSES : 0) |
    (rt.network ? RT_ALLOW_NETWORK : 0) | RT_KILL_REFUSALS), 'SANDGATE_RT_RESULT',
  'the run-time seccomp filter');
  // A job that may start no process may map no new code either: its
  // libraries are all mapped by now (a process it could start would need
  // its own).
  if (!rt.processes) {
    installFilter(NOCODE_LIB, 'SANDGATE_NOCODE', '1', 'SANDGATE_NOCODE_RESULT',
      'the no-native-code filter');
  }
}

// Loads one of the runner's Node-API filter libraries (mapped before the
// drop: no file is read now), whose registration reads env[ask] and leaves
// its result in env[result].
function installFilter(lib, ask, value, result, what) {
  const env = realProcess.env;
  env[ask] = value;
  try {
    realProcess.dlopen({ exports: {} }, lib);
  } finally {
    delete env[ask];
  }
  const got = env[result];
  delete env[result];
  if (got !== '0') throw new Error(`cannot install ${what} (${got})`);
}

// What a refused module would have given: the denial's type.
const MODULE_CAPABILITY = {
  child_process: 'process', cluster: 'process', worker_threads: 'process',
  net: 'network', http: 'network', https: 'network', http2: 'network', dgram: 'network',
  dns: 'network', tls: 'network', fs: 'file', vm: 'reflection', v8: 'reflection',
  inspector: 'reflection', module: 'reflection', process: 'reflection', repl: 'reflection',
  wasi: 'native_code', trace_events: 'reflection',
};

function moduleAllowed(imports, name) {
  if (!imports) return true;
  const hit = arrSome(imports.modules, (m) => name === m || strStartsWith(name, `${m}/`));
  return imports.mode === 'deny' ? !hit : hit;
}

function policyRequire(rt, realRequire) {
  return function require(id) {
    if (typeof id !== 'string') deny('import', typeof id);
    const name = strStartsWith(id, 'node:') ? strSlice(id, 5) : id;
    if (!name || strStartsWith(name, '.') || strStartsWith(name, '/') ||
        strIncludes(name, '\\') || arrIncludes(strSplit(name, '/'), '..') ||
        !moduleAllowed(rt.imports, name)) {
      const top = strSplit(name, '/')[0];
      deny(hasOwn(MODULE_CAPABILITY, top) ? MODULE_CAPABILITY[top] : 'import', id);
    }
    return realRequire(name);
  };
}

function reducedProcess(props) {
  const rp = realProcess;
  const out = {};
  const wrap = (f) => (...a) => f.apply(rp, a);
  for (const key of props) {
    const v = rp[key];
    if (key === 'env') out.env = Object.freeze({ ...rp.env });
    else if (key === 'argv') out.argv = Object.freeze([...rp.argv]);
    else if (key === 'versions') out.versions = Object.freeze({ ...rp.versions });
    else if (key === 'exitCode') {
      Object.defineProperty(out, 'exitCode', { get: () => rp.exitCode,
        set: (c) => { rp.exitCode = c; }, enumerable: true });
    } else if (key === 'stdout' || key === 'stderr') {
      Object.defineProperty(out, key, { get: () => rp[key], enumerable: true });
    } else if (typeof v === 'function') {
      const f = wrap(v);
      for (const sub of ['bigint', 'rss']) if (typeof v[sub] === 'function') f[sub] = wrap(v[sub]);
      out[key] = f;
    } else if (v === null || typeof v !== 'object') {
      out[key] = v;
    }
  }
  return Object.freeze(out);
}

// Object.freeze, keeping plain assignment of an inherited name (the
// "override mistake") working: each data property becomes an accessor whose
// setter gives the receiver an own property instead.
// keepWritable: a data property that is writable but not configurable (it
// cannot become an accessor) stays writable, and the object is only made
// non-extensible: freezing it would break every instance's assignment of
// that name (EventEmitter.prototype[kCapture]: `this[kCapture] = ...`).
function harden(obj, keepWritable) {
  for (const key of Reflect.ownKeys(obj)) {
    const d = Object.getOwnPropertyDescriptor(obj, key);
    if (!d.configurable || !('value' in d)) continue;
    const value = d.value;
    Object.defineProperty(obj, key, {
      get() { return value; },
      set(v) {
        if (this === obj) throw new TypeError(`Cannot assign to read only property '${String(key)}'`);
        Object.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable,
      configurable: false,
    });
  }
  if (keepWritable) Object.preventExtensions(obj);
  else Object.freeze(obj);
}

function installRuntime(rt) {
  installSeccomp(rt);
  if (GUARD_OFF) return;
  const reduced = reducedProcess(rt.process_properties || []);
  Object.defineProperty(globalThis, 'process', { value: reduced, writable: false,
    enumerable: false, configurable: false });
  // EventEmitter.prototype and the real process's own prototype: Node's
  // internals call emit/on on the real process (warnings, unhandled
  // rejections, beforeExit), so a method planted there would receive it.
  for (const o of [Object.prototype, Array.prototype, Function.prototype, Error.prototype]) harden(o);
  for (const o of [EventEmitter.prototype, Object.getPrototypeOf(realProcess)]) harden(o, true);
  // Newer Nodes make prepareStackTrace an accessor that still takes an
  // override after a freeze: pin it to "none" first.
  Object.defineProperty(Error, 'prepareStackTrace', { value: undefined, writable: false,
    enumerable: false, configurable: false });
  Object.freeze(Error);
}

function guardedModule(rt, realRequire, mod) {
  const req = policyRequire(rt, realRequire);
  const plain = { exports: mod.exports, id: '.', filename: mod.filename, loaded: false,
    children: [], paths: [] };
  return [req, plain];
}

// Blocking: each write of the program is in the pipe when it returns, so
// nothing is still queued here when the report goes out.
function blockingStdio() {
  for (const stream of [realProcess.stdout, realProcess.stderr]) {
    if (stream._handle && typeof stream._handle.setBlocking === 'function') {
      stream._handle.setBlocking(true);
    }
  }
}

// fd 3 up to the end of its next line, or to EOF: first the report token's
// line, then a one-shot job's arguments, which end with EOF (the parent
// closes the pipe), or a session's start line, which ends with '\n' (the pipe
// stays open for its cells: sessionLoop).
let jobRest = bufAlloc(0);
// Only intrinsics taken before any job code ran: a session's cells run
// between two reads.
function readJobLine() {
  let joined = jobRest;
  const buf = bufAlloc(READ_CHUNK);
  for (;;) {
    const nl = bufIndexOf(joined, 10);
    if (nl >= 0) {
      jobRest = bufSubarray(joined, nl + 1);
      return bufToString(bufSubarray(joined, 0, nl), 'utf8');
    }
    let n;
    try {
      n = fsReadSync(JOB_FD, buf, 0, READ_CHUNK, null);
    } catch (e) {
      if (e.code === 'EAGAIN' || e.code === 'EINTR') continue;
      throw e;
    }
    if (n === 0) {
      jobRest = bufAlloc(0);
      return byteLength(joined) ? bufToString(joined, 'utf8') : null;
    }
    joined = bufConcat([joined, bufferFrom(bufSubarray(buf, 0, n))]);
  }
}

function runJob() {
  let raw;
  try {
    raw = readJobLine();
  } catch (e) {
    realProcess.exit(70);
  }
  if (!raw) realProcess.exit(0); // the parent gave up on the job
  reportToken = raw;
  try {
    raw = readJobLine();
  } catch (e) {
    realProcess.exit(70);
  }
  if (!raw) realProcess.exit(0);
  const payload = jsonParse(raw);
  if (payload.session === true) {
    sessionLoop(payload.runtime || null);
    return;
  }
  fs.closeSync(JOB_FD);
  // A networked job's clients go through the egress proxy (egress.js).
  if (payload.runtime && payload.runtime.network && EGRESS) EGRESS.install();
  childRun(payload.arguments, payload.runtime || null, payload.mode === 'script');
}

// ---------------------------------------------------------------- sessions
// A session (executors/PROTOCOL.md "Session mode"): the run-time policy is
// installed once, then each line on fd 3 is a cell run as a script in this
// context, so top-level declarations persist from cell to cell; the value of
// the last expression statement (the script's completion value, awaited when
// it is a promise) is the result. One report line per cell on fd 4. SIGINT
// from the parent interrupts a running cell (vm's breakOnSigint for
// synchronous code, a rejection for an awaited promise).
function sessionReport(obj) {
  writeAllSync(REPORT_FD, bufferFrom(`${reportToken} ${jsonStringify(obj)}\n`, 'utf8'));
}

function sessionLoop(rt) {
  let interrupt = null;
  try {
    if (rt) installRuntime(rt);
  } catch (e) {
    childReport(jsonStringify({ outcome: 'exception', message: errorMessage(e) }), 70);
    return;
  }
  const realRequire = Module.createRequire(path.join(WORKSPACE, MAIN_FILE));
  Object.defineProperty(globalThis, 'require', { value: rt && !GUARD_OFF
    ? policyRequire(rt, realRequire) : realRequire, writable: false, enumerable: false,
  configurable: false });
  realProcess.on('SIGINT', () => { if (interrupt) interrupt(); });
  realProcess.on('uncaughtException', (e) => { writeErr(`${cleanStack(e)}\n`); });
  realProcess.on('unhandledRejection', (e) => { writeErr(`${cleanStack(e)}\n`); });
  sessionReport({ outcome: 'ready' });
  let number = 0;
  const next = () => {
    let line;
    try {
      line = readJobLine();
    } catch (e) {
      realProcess.exit(70);
    }
    if (line === null) realProcess.exit(0);
    number += 1;
    const code = jsonParse(line).cell;
    let over = false;
    const fail = (e) => {
      if (over) return;
      over = true;
      interrupt = null;
      writeErr(`${cleanStack(e)}\n`);
      sessionReport({ outcome: 'exception', message: errorMessage(e) });
      setImmediateF(next);
    };
    // Memory is the parent's reading (runner_session.c), not reported here.
    const done = (value) => {
      if (over) return;
      over = true;
      interrupt = null;
      if (value === undefined) {
        sessionReport({ outcome: 'ok', present: false });
      } else {
        const s = serialise(value);
        let text = s.text;
        if (s.error) {
          try { text = jsonStringify(toText(value)); } catch (e) { text = '"(unprintable)"'; }
        }
        sessionReport({ outcome: 'ok', present: true, value_json: text });
      }
      setImmediateF(next);
    };
    let value;
    try {
      const script = new ScriptCtor(code, { filename: `cell${number}.js` });
      value = scriptRunInThisContext(script, { breakOnSigint: true });
    } catch (e) {
      fail(e);
      return;
    }
    interrupt = () => fail(new Error('Script execution interrupted.'));
    settle(value, done, fail);
  };
  setImmediateF(next);
}

// Started as root by sandgate-runner --identity-split (SANDGATE_IDENTITY_SPLIT=1,
// in the child's environment only): the seccomp library is mapped now (a
// later dlopen of the same path finds it loaded and reads no file), then the
// process becomes the job's uid and gid for good, with no capability left.
// The parent checks the result in /proc before it hands over the job.
function dropIdentity() {
  const rp = realProcess;
  const env = rp.env;
  const split = env.SANDGATE_IDENTITY_SPLIT === '1';
  delete env.SANDGATE_IDENTITY_SPLIT;
  if (!split) return;
  for (const lib of [RT_LIB, NOCODE_LIB]) {
    try {
      rp.dlopen({ exports: {} }, lib); // not asked (no SANDGATE_RT_FLAGS/_NOCODE): installs nothing
    } catch (e) { /* installSeccomp() says so when the job needs it */ }
  }
  delete env.SANDGATE_RT_RESULT;
  delete env.SANDGATE_NOCODE_RESULT;
  rp.setgroups([]);
  rp.setgid(JOB_GID);
  rp.setuid(JOB_UID);
  if (rp.getuid() !== JOB_UID || rp.geteuid() !== JOB_UID || rp.getgid() !== JOB_GID ||
      rp.getegid() !== JOB_GID) rp.reallyExit(72);
}

// Per process, before the job: what a snapshot cannot hold (the random hook
// name, the working directory, the stdio streams, modules of the image's
// configuration), then wait for the job from the event loop rather than from
// here: Node finishes its own start-up after this returns, and a program's
// first microtask would otherwise wait for that (~2 ms under runsc).
function start() {
  HOOK = `__sandgate_main_${crypto.randomBytes(8).toString('hex')}`;
  realProcess = process;
  RT_LIB = realProcess.env.SANDGATE_RUNTIME_LIB || RT_LIB;
  NOCODE_LIB = path.join(path.dirname(RT_LIB), 'libsandgate_nocode.so');
  GUARD_OFF = realProcess.env.SANDGATE_TEST_GUARD_OFF === '1';
  delete realProcess.env.SANDGATE_TEST_GUARD_OFF;
  WORKSPACE = realProcess.cwd();
  const preimport = (realProcess.env.SANDGATE_PREIMPORT || '').split(',').map((s) => s.trim())
    .filter(Boolean);
  // The full CommonJS require, resolving from this file as before: the
  // snapshot's own `require` knows only built-in modules (and warns on some).
  const load = Module.createRequire(__filename);
  for (const name of preimport) {
    try { load(name); } catch (e) { /* optional module missing: not fatal */ }
  }
  // A networked sandbox: the proxy set-up is loaded before the job arrives.
  const proxy = realProcess.env.SANDGATE_EGRESS_PROXY;
  if (proxy) EGRESS = load('./egress.js').prepare(proxy, load);
  dropIdentity();
  // The parent turns the EOF into the ready line the executor's pool waits for.
  try { fs.closeSync(READY_FD); } catch (e) { /* started without one: nobody waits */ }
  blockingStdio();
  setImmediate(runJob);
}

// The image runs this file from a V8 start-up snapshot (images/nodejs/README.md):
// `node --snapshot-blob runner.blob --build-snapshot runner.js` runs the code
// above once at image build time, and each sandbox's node starts from that
// heap and calls start(). Run directly, it starts at once.
const { startupSnapshot } = require('v8');
if (startupSnapshot && startupSnapshot.isBuildingSnapshot()) {
  startupSnapshot.setDeserializeMainFunction(start);
} else {
  start();
}
