'use strict';
/*
 * sandgate Node.js runner, child side: the process that runs the submitted
 * program. The container's main process is sandgate-runner (runner_main.c
 * here), which holds the protocol of executors/PROTOCOL.md and starts this
 * as `node --disallow-code-generation-from-strings /opt/sandgate/runner.js`
 * before any job exists, in its own process group, in the workspace, with
 *
 *   fd 0 /dev/null     fd 3 the job's arguments (JSON object), then EOF
 *   fd 1 stdout pipe   fd 4 the report: ONE line of JSON ending in '\n'
 *   fd 2 stderr pipe
 *
 * Everything that can happen before the job does (interpreter start-up,
 * SANDGATE_PREIMPORT modules, the stdout/stderr streams, the compiler) is
 * done at start; then this blocks on fd 3. The parent wrote main.js before
 * sending the arguments. The report is {outcome: ok|exception|no_main,
 * present, value_json (the value as JSON text), message, max_rss_kb}; the
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

// Set at start (not when the snapshot is built): the parent's --workspace is
// the child's working directory.
let WORKSPACE = '/workspace';
const MAIN_FILE = 'main.js';
const JOB_FD = 3;
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

function writeAllSync(fd, buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

function childReport(message, code) {
  writeAllSync(REPORT_FD, Buffer.from(`${message}\n`, 'utf8'));
  process.exit(code);
}

function cleanStack(err) {
  if (err instanceof Error && typeof err.stack === 'string') {
    return err.stack.split('\n').filter((l) => !l.includes(__filename)).join('\n');
  }
  return `Uncaught ${String(err)}`;
}

function compileMain() {
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
  fn.call(mod.exports, mod.exports, req, mod, filename, WORKSPACE, (f) => { topLevel = f; });
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
    text = JSON.stringify(value);
  } catch (e) {
    return { error: `main() returned a value that is not JSON-serialisable: ${e.message}` };
  }
  if (text === undefined) {
    return { error: `main() returned a value that is not JSON-serialisable (${typeof value})` };
  }
  if (LONE_SURROGATE_RE.test(text)) {
    return { error: 'main() returned a string with a lone UTF-16 surrogate (not valid UTF-8)' };
  }
  if (jsonDepth(text) > RESULT_MAX_DEPTH) {
    return { error: `main() returned a value nested deeper than ${RESULT_MAX_DEPTH} levels` };
  }
  return { text };
}

function childRun(args) {
  let reported = false;
  const fail = (err) => {
    if (reported) return;
    reported = true;
    process.stderr.write(`${cleanStack(err)}\n`);
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    childReport(JSON.stringify({ outcome: 'exception', message: message.slice(0, 1000) }), 1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  const done = (value) => {
    if (reported) return;
    reported = true;
    const rss = process.resourceUsage().maxRSS;
    if (value === undefined) {
      childReport(JSON.stringify({ outcome: 'ok', present: false, max_rss_kb: rss }), 0);
      return;
    }
    const s = serialise(value);
    if (s.error) {
      process.stderr.write(`${s.error}\n`);
      childReport(JSON.stringify({ outcome: 'exception', message: s.error }), 1);
      return;
    }
    // As text: the parent's JSON parser stops at 64-bit integers, JSON.stringify
    // does not (1e20 is written 100000000000000000000).
    childReport(JSON.stringify({ outcome: 'ok', present: true, max_rss_kb: rss, value_json: s.text }),
      0);
  };
  reportNeverSettled(() => reported, () => { reported = true; });
  let main;
  try {
    main = compileMain();
  } catch (e) {
    fail(e);
    return;
  }
  if (typeof main !== 'function') {
    reported = true;
    childReport(JSON.stringify({
      outcome: 'no_main',
      message: 'main.js defines no main function (module.exports, exports.main or function main)',
    }), 1);
    return;
  }
  Promise.resolve().then(() => main(args)).then(done, fail);
}

// Node exits when nothing is left to run (no timer, I/O, child process...),
// even with main()'s promise still pending: nothing could ever settle it then.
// Say so instead of ending as if main() had returned. While something is
// left, the promise is waited for, up to the job's time limit.
function reportNeverSettled(isReported, markReported) {
  // What is open before the program runs (the stdio pipes) is listed as active
  // but does not keep Node running; more than that does.
  const baseline = process.getActiveResourcesInfo().length;
  process.on('beforeExit', () => {
    if (isReported()) return;
    // The program's own beforeExit listeners may have started work that will
    // settle it: judge once they have had their turn.
    setImmediate(() => {
      if (isReported() || process.getActiveResourcesInfo().length > baseline) return;
      markReported();
      const message = 'main() returned a promise that never settled: nothing was left to run '
        + 'that could settle it (no pending timer, I/O or callback)';
      process.stderr.write(`${message}\n`);
      childReport(JSON.stringify({ outcome: 'exception', message }), 1);
    });
  });
}

// Blocking: each write of the program is in the pipe when it returns, so
// nothing is still queued here when the report goes out.
function blockingStdio() {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream._handle && typeof stream._handle.setBlocking === 'function') {
      stream._handle.setBlocking(true);
    }
  }
}

function readArguments() {
  const chunks = [];
  const buf = Buffer.allocUnsafe(READ_CHUNK);
  for (;;) {
    let n;
    try {
      n = fs.readSync(JOB_FD, buf, 0, buf.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN' || e.code === 'EINTR') continue;
      throw e;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  fs.closeSync(JOB_FD);
  return Buffer.concat(chunks).toString('utf8');
}

function runJob() {
  let raw;
  try {
    raw = readArguments();
  } catch (e) {
    process.exit(70);
  }
  if (!raw) process.exit(0); // the parent gave up on the job
  childRun(JSON.parse(raw));
}

// Per process, before the job: what a snapshot cannot hold (the random hook
// name, the working directory, the stdio streams, modules of the image's
// configuration), then wait for the job from the event loop rather than from
// here: Node finishes its own start-up after this returns, and a program's
// first microtask would otherwise wait for that (~2 ms under runsc).
function start() {
  HOOK = `__sandgate_main_${crypto.randomBytes(8).toString('hex')}`;
  WORKSPACE = process.cwd();
  const preimport = (process.env.SANDGATE_PREIMPORT || '').split(',').map((s) => s.trim())
    .filter(Boolean);
  // The full CommonJS require, resolving from this file as before: the
  // snapshot's own `require` knows only built-in modules (and warns on some).
  const load = Module.createRequire(__filename);
  for (const name of preimport) {
    try { load(name); } catch (e) { /* optional module missing: not fatal */ }
  }
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
