'use strict';
/*
 * sandgate Node.js runner: the main process of a sandbox container.
 *
 * Runner side of executors/PROTOCOL.md. Started by the executor's warm pool as
 * `node --disallow-code-generation-from-strings /opt/sandgate/runner.js`
 * before any job exists:
 *
 *   parent (this process, PID 1)         child (spawned at start-up, same flags)
 *   holds the container's real stdout    fd 0 = /dev/null, fd 1/2 = pipes to the parent,
 *   reads one job line from stdin        fd 3 = job pipe (in), fd 4 = result pipe (out)
 *   writes input files and main.js       waits on fd 3, compiles main.js, calls
 *   hands the arguments to the child     main(arguments), awaits a promise, sends the
 *   reads stdout/stderr (capped) and     outcome back on fd 4, exits
 *   the result pipe, enforces timeout_ms
 *   collects artifacts, writes the ONE result line, exits
 *
 * Only the parent writes to the real stdout and only it knows the job's nonce
 * (executors/PROTOCOL.md, "Why a nonce"); the child's report is trusted only
 * for what the program could produce anyway (its return value or exception).
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
 * program left pending do not run.
 *
 * Tunables: the same SANDGATE_* environment variables as the Python runner
 * (see images/python/runner.py); SANDGATE_PREIMPORT is a comma-separated list
 * of modules the child requires before the job arrives.
 */
const fs = require('fs');
const path = require('path');
const net = require('net');
const crypto = require('crypto');
const { spawn } = require('child_process');

const PROTOCOL_VERSION = 1;
const WORKSPACE = '/workspace';
const MAIN_FILE = 'main.js';
const ARTIFACT_DIR = 'artifacts';
const EXIT_TIMEOUT = -124;
const EXIT_OUTPUT = -125;
const EXIT_RUNNER = -3;
const DEFAULT_TIMEOUT_MS = 10000;
const MAX_TIMEOUT_MS = 600000;
const DEFAULT_MAX_OUTPUT = 1 << 20;
const MAX_MAX_OUTPUT = 64 << 20;
const MAX_NAME_BYTES = 255;
const CHILD_FLAG = '--sandgate-child';
// After the child exits, how long to wait for pipes a descendant still holds.
const CLOSE_GRACE_MS = 100;
const RSS_SAMPLE_MS = 50;
const NONCE_RE = /^[A-Za-z0-9]{16,128}$/;
// A lone surrogate, which JSON.stringify writes as an escape that other JSON
// parsers (the executor's) reject; an even run of backslashes before it is text.
const LONE_SURROGATE_RE = /(?:^|[^\\])(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

const MIME_TYPES = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif',
  svg: 'image/svg+xml', pdf: 'application/pdf', csv: 'text/csv',
  json: 'application/json', txt: 'text/plain', html: 'text/html', md: 'text/markdown',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xls: 'application/vnd.ms-excel',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

function envInt(name, dflt, low, high) {
  const raw = process.env[name];
  const value = raw && /^-?\d+$/.test(raw) ? Number(raw) : dflt;
  return Math.min(Math.max(value, low), high);
}

function readConfig() {
  return {
    preimport: (process.env.SANDGATE_PREIMPORT || '').split(',').map((s) => s.trim())
      .filter(Boolean),
    maxJob: envInt('SANDGATE_MAX_JOB_BYTES', 48 << 20, 1 << 10, 1 << 30),
    maxFiles: envInt('SANDGATE_MAX_INPUT_FILES', 64, 0, 4096),
    maxFilesBytes: envInt('SANDGATE_MAX_INPUT_BYTES', 16 << 20, 0, 1 << 30),
    artFiles: envInt('SANDGATE_ARTIFACT_MAX_FILES', 10, 0, 1000),
    artBytes: envInt('SANDGATE_ARTIFACT_MAX_BYTES', 10 << 20, 0, 1 << 30),
    artTotal: envInt('SANDGATE_ARTIFACT_MAX_TOTAL', 20 << 20, 0, 1 << 30),
  };
}

class BadJob extends Error {}
class RunnerError extends Error {}

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

// ------------------------------------------------------------------ child

function childReport(sock, message, code) {
  sock.end(Buffer.from(message, 'utf8'), () => process.exit(code));
}

function cleanStack(err) {
  if (err instanceof Error && typeof err.stack === 'string') {
    return err.stack.split('\n').filter((l) => !l.includes(__filename)).join('\n');
  }
  return `Uncaught ${String(err)}`;
}

function compileMain() {
  const Module = require('module');
  const vm = require('vm');
  const filename = path.join(WORKSPACE, MAIN_FILE);
  let source = fs.readFileSync(filename, 'utf8');
  if (source.startsWith('#!')) source = `//${source.slice(2)}`; // keep line numbers
  const hook = `__sandgate_main_${crypto.randomBytes(8).toString('hex')}`;
  const body = `${source}\n;if (typeof main === "function") ${hook}(main);`;
  const fn = vm.compileFunction(body,
    ['exports', 'require', 'module', '__filename', '__dirname', hook], { filename });
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
  return { text };
}

function childRun(sock, args) {
  let reported = false;
  const fail = (err) => {
    if (reported) return;
    reported = true;
    process.stderr.write(`${cleanStack(err)}\n`);
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    childReport(sock, JSON.stringify({ outcome: 'exception', message: message.slice(0, 1000) }), 1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  const done = (value) => {
    if (reported) return;
    reported = true;
    const rss = process.resourceUsage().maxRSS;
    if (value === undefined) {
      childReport(sock, JSON.stringify({ outcome: 'ok', present: false, max_rss_kb: rss }), 0);
      return;
    }
    const s = serialise(value);
    if (s.error) {
      process.stderr.write(`${s.error}\n`);
      childReport(sock, JSON.stringify({ outcome: 'exception', message: s.error }), 1);
      return;
    }
    childReport(sock, `{"outcome":"ok","present":true,"max_rss_kb":${rss},"value":${s.text}}`, 0);
  };
  let main;
  try {
    main = compileMain();
  } catch (e) {
    fail(e);
    return;
  }
  if (typeof main !== 'function') {
    reported = true;
    childReport(sock, JSON.stringify({
      outcome: 'no_main',
      message: 'main.js defines no main function (module.exports, exports.main or function main)',
    }), 1);
    return;
  }
  Promise.resolve().then(() => main(args)).then(done, fail);
}

function childMain() {
  const cfg = readConfig();
  for (const name of cfg.preimport) {
    try { require(name); } catch (e) { /* optional module missing: not fatal */ }
  }
  const jobIn = new net.Socket({ fd: 3, readable: true, writable: false });
  const resOut = new net.Socket({ fd: 4, readable: false, writable: true });
  const chunks = [];
  jobIn.on('data', (c) => chunks.push(c));
  jobIn.on('end', () => {
    jobIn.destroy();
    const raw = Buffer.concat(chunks).toString('utf8');
    if (!raw) process.exit(0); // the parent gave up on the job
    childRun(resOut, JSON.parse(raw));
  });
  jobIn.on('error', () => process.exit(70));
}

// ----------------------------------------------------------------- parent

function checkName(name) {
  if (typeof name !== 'string' || name === '') throw new BadJob('file names must be non-empty strings');
  if (name.includes('/') || name.includes('\0') || name.includes('..') || name.startsWith('.')) {
    throw new BadJob(`refused file name ${JSON.stringify(name)}: no '/', '..', NUL or leading dot`);
  }
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) throw new BadJob('file name longer than 255 bytes');
  if (name === MAIN_FILE || name === ARTIFACT_DIR) {
    throw new BadJob(`refused file name ${JSON.stringify(name)}: reserved by the runner`);
  }
}

function decodeFiles(cfg, files) {
  if (files === undefined || files === null) return [];
  if (typeof files !== 'object' || Array.isArray(files)) {
    throw new BadJob("'files' must be an object of name -> base64");
  }
  const names = Object.keys(files);
  if (names.length > cfg.maxFiles) throw new BadJob(`too many input files (${names.length} > ${cfg.maxFiles})`);
  const out = [];
  let total = 0;
  for (const name of names) {
    checkName(name);
    const b64 = files[name];
    if (typeof b64 !== 'string') throw new BadJob(`file ${JSON.stringify(name)}: content must be a base64 string`);
    if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
      throw new BadJob(`file ${JSON.stringify(name)}: content is not valid base64`);
    }
    total += (b64.length / 4) * 3;
    if (total > cfg.maxFilesBytes + 3 * names.length) {
      throw new BadJob(`input files larger than ${cfg.maxFilesBytes} bytes in total`);
    }
    out.push([name, Buffer.from(b64, 'base64')]);
  }
  if (out.reduce((n, [, d]) => n + d.length, 0) > cfg.maxFilesBytes) {
    throw new BadJob(`input files larger than ${cfg.maxFilesBytes} bytes in total`);
  }
  return out;
}

function intLimit(limits, key, dflt, high) {
  const v = limits[key];
  if (v === undefined || v === null) return dflt;
  if (!Number.isInteger(v) || v < 1) throw new BadJob(`limits.${key} must be a positive integer`);
  return Math.min(v, high);
}

// The job's nonce if it is well-formed (a bad_job reports it too).
function jobNonce(job) {
  const nonce = job && typeof job === 'object' ? job.nonce : undefined;
  return typeof nonce === 'string' && NONCE_RE.test(nonce) ? nonce : null;
}

function parseJob(cfg, job) {
  if (!job || typeof job !== 'object' || Array.isArray(job)) throw new BadJob('job must be a JSON object');
  if (typeof job.code !== 'string') throw new BadJob("'code' must be a string");
  const args = job.arguments === undefined || job.arguments === null ? {} : job.arguments;
  if (typeof args !== 'object' || Array.isArray(args)) throw new BadJob("'arguments' must be an object");
  const limits = job.limits || {};
  if (typeof limits !== 'object' || Array.isArray(limits)) throw new BadJob("'limits' must be an object");
  if (job.nonce !== undefined && job.nonce !== null && jobNonce(job) === null) {
    throw new BadJob("'nonce' must be 16-128 characters [A-Za-z0-9]");
  }
  return {
    nonce: jobNonce(job),
    code: job.code,
    args,
    files: decodeFiles(cfg, job.files),
    timeoutMs: intLimit(limits, 'timeout_ms', DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
    maxOutput: intLimit(limits, 'max_output_bytes', DEFAULT_MAX_OUTPUT, MAX_MAX_OUTPUT),
  };
}

function prepareWorkspace(job) {
  const where = (name) => path.join(WORKSPACE, name);
  try {
    fs.writeFileSync(where(MAIN_FILE), job.code, { flag: 'wx', mode: 0o600 });
    fs.mkdirSync(where(ARTIFACT_DIR), 0o700);
    for (const [name, data] of job.files) fs.writeFileSync(where(name), data, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if (e.code === 'EEXIST') throw new BadJob(`file ${JSON.stringify(path.basename(e.path || ''))} given twice`);
    throw new RunnerError(`cannot write the workspace: ${e.message}`);
  }
}

function collectArtifacts(cfg) {
  const found = [];
  const skipped = [];
  const dir = path.join(WORKSPACE, ARTIFACT_DIR);
  let total = 0;
  let names;
  try {
    if (!fs.lstatSync(dir).isDirectory()) return { found, skipped };
    names = fs.readdirSync(dir).sort();
  } catch (e) {
    return { found, skipped };
  }
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  for (const name of names) {
    const dot = name.lastIndexOf('.');
    const ext = dot >= 0 ? name.slice(dot + 1).toLowerCase() : '';
    if (!Object.prototype.hasOwnProperty.call(MIME_TYPES, ext)) continue;
    if (found.length >= cfg.artFiles) { skipped.push({ name, reason: 'too many artifacts' }); continue; }
    let fd;
    try {
      fd = fs.openSync(path.join(dir, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (e) {
      skipped.push({ name, reason: 'not a regular file' });
      continue;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) { skipped.push({ name, reason: 'not a regular file' }); continue; }
      if (st.size > cfg.artBytes || total + st.size > cfg.artTotal) {
        skipped.push({ name, reason: 'too large' });
        continue;
      }
      const buf = Buffer.alloc(Math.min(st.size, cfg.artBytes) + 1);
      let n = 0;
      for (let r; n < buf.length && (r = fs.readSync(fd, buf, n, buf.length - n, null)) > 0;) n += r;
      if (n > cfg.artBytes || total + n > cfg.artTotal) { skipped.push({ name, reason: 'too large' }); continue; }
      total += n;
      found.push({ name, mime_type: MIME_TYPES[ext], size: n,
        content_b64: buf.subarray(0, n).toString('base64') });
    } finally {
      fs.closeSync(fd);
    }
  }
  return { found, skipped };
}

// Writes the result line (see the Python runner's report() for why it starts
// with a newline and carries the nonce) and exits.
function report(fields, nonce) {
  const line = Object.assign({
    sandgate_runner: PROTOCOL_VERSION, nonce, outcome: 'ok', exit_code: 0, signal: 0,
    stdout: '', stderr: '', result: { present: false }, artifacts: [],
    memory_used_kb: 0, time_used_ms: 0, message: null,
  }, fields);
  writeAllSync(1, Buffer.from(`\n${JSON.stringify(line)}\n`, 'utf8'));
  process.exit(0);
}

const SIGNALS = require('os').constants.signals;

function classify(st) {
  const res = { exit_code: 0, signal: 0, result: { present: false }, message: null };
  if (st.stopped === 'timeout') {
    return Object.assign(res, { outcome: 'timeout', exit_code: EXIT_TIMEOUT, message: 'timeout_ms exceeded' });
  }
  if (st.stopped === 'output_limit') {
    return Object.assign(res, { outcome: 'output_limit', exit_code: EXIT_OUTPUT,
      message: `${st.limitHit} larger than max_output_bytes (${st.cap})` });
  }
  if (st.signal) {
    res.signal = SIGNALS[st.signal] || 0;
    res.exit_code = -res.signal;
  } else {
    res.exit_code = st.code || 0;
  }
  let rep = null;
  try {
    rep = st.bufs.result.size ? JSON.parse(st.text('result')) : null;
  } catch (e) {
    rep = null;
  }
  if (rep && typeof rep === 'object' && ['ok', 'exception', 'no_main'].includes(rep.outcome)) {
    res.outcome = rep.outcome;
    res.message = typeof rep.message === 'string' ? rep.message : null;
    if (Number.isInteger(rep.max_rss_kb)) st.rssKb = Math.max(st.rssKb, rep.max_rss_kb);
    if (rep.outcome === 'ok' && rep.present) {
      const s = serialise(rep.value);
      if (s.error) Object.assign(res, { outcome: 'exception', message: s.error });
      else res.result = { present: true, value: rep.value };
    }
    return res;
  }
  if (res.signal) return Object.assign(res, { outcome: 'killed', message: `the program was killed by signal ${st.signal}` });
  if (res.exit_code === 0) return Object.assign(res, { outcome: 'ok' });
  return Object.assign(res, { outcome: 'exception', message: `the program exited with status ${res.exit_code}` });
}

class Capture {
  constructor(cap) {
    this.cap = cap;
    this.size = 0;
    this.chunks = [];
  }

  // Returns false once the cap is exceeded (the excess is dropped).
  take(chunk) {
    const room = this.cap - this.size;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.size += part.length;
    }
    return chunk.length <= room;
  }

  text() { return Buffer.concat(this.chunks).toString('utf8'); }
}

function sampleRss(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch (e) {
    return 0;
  }
}

function killGroup(child) {
  try { process.kill(-child.pid, 'SIGKILL'); } catch (e) { /* already gone */ }
}

function runJob(cfg, child, job) {
  prepareWorkspace(job);
  const st = {
    cap: job.maxOutput, stopped: null, limitHit: null, code: null, signal: null, rssKb: 0,
    bufs: { stdout: new Capture(job.maxOutput), stderr: new Capture(job.maxOutput),
      result: new Capture(job.maxOutput) },
  };
  st.text = (k) => st.bufs[k].text();
  const started = process.hrtime.bigint();
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    clearTimeout(timer);
    clearInterval(sampler);
    killGroup(child);
    const fields = classify(st);
    fields.stdout = st.text('stdout');
    fields.stderr = st.text('stderr');
    fields.time_used_ms = Math.round(elapsed * 1000) / 1000;
    fields.memory_used_kb = st.rssKb;
    if (['ok', 'exception', 'no_main'].includes(fields.outcome)) {
      const { found, skipped } = collectArtifacts(cfg);
      fields.artifacts = found;
      if (skipped.length) fields.artifacts_skipped = skipped;
    }
    report(fields, job.nonce);
  };
  const stop = (why) => {
    if (st.stopped) return;
    st.stopped = why;
    killGroup(child);
  };
  const watch = (stream, key) => stream.on('data', (c) => {
    if (!st.bufs[key].take(c)) {
      st.limitHit = key;
      stop('output_limit');
    }
  });
  watch(child.stdio[1], 'stdout');
  watch(child.stdio[2], 'stderr');
  watch(child.stdio[4], 'result');
  const timer = setTimeout(() => stop('timeout'), job.timeoutMs);
  const sampler = setInterval(() => { st.rssKb = Math.max(st.rssKb, sampleRss(child.pid)); }, RSS_SAMPLE_MS);
  child.on('exit', (code, signal) => {
    st.code = code;
    st.signal = signal;
    setTimeout(finish, CLOSE_GRACE_MS);
  });
  child.on('close', finish);
  child.stdio[3].end(JSON.stringify(job.args));
}

function readJobLine(cfg, cb) {
  const chunks = [];
  let size = 0;
  let done = false;
  const deliver = (err, line) => {
    if (done) return;
    done = true;
    process.stdin.pause();
    cb(err, line);
  };
  process.stdin.on('data', (c) => {
    const nl = c.indexOf(10);
    const part = nl >= 0 ? c.subarray(0, nl) : c;
    size += part.length;
    if (size > cfg.maxJob) { deliver(new BadJob(`job line longer than ${cfg.maxJob} bytes`)); return; }
    chunks.push(part);
    if (nl >= 0) deliver(null, Buffer.concat(chunks).toString('utf8'));
  });
  process.stdin.on('end', () => deliver(null, size ? Buffer.concat(chunks).toString('utf8') : null));
  process.stdin.on('error', (e) => deliver(new RunnerError(`stdin: ${e.message}`)));
}

function parentMain() {
  const cfg = readConfig();
  const child = spawn(process.execPath, ['--disallow-code-generation-from-strings', __filename, CHILD_FLAG], {
    cwd: WORKSPACE,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
    detached: true, // own process group: a timeout kills everything the program started
    env: { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: '/tmp', TMPDIR: '/tmp',
      SANDGATE_PREIMPORT: process.env.SANDGATE_PREIMPORT || '' },
  });
  child.on('error', (e) => {
    process.stderr.write(`runner: cannot start the child: ${e.message}\n`);
    process.exit(70);
  });
  let nonce = null;
  readJobLine(cfg, (err, line) => {
    try {
      if (err) throw err;
      if (line === null) {
        process.stderr.write('runner: stdin closed before a job arrived\n');
        killGroup(child);
        process.exit(3);
      }
      let raw;
      try {
        raw = JSON.parse(line);
      } catch (e) {
        throw new BadJob(`job is not valid JSON: ${e.message}`);
      }
      nonce = jobNonce(raw);
      runJob(cfg, child, parseJob(cfg, raw));
    } catch (e) {
      killGroup(child);
      const outcome = e instanceof BadJob ? 'bad_job' : 'runner_error';
      report({ outcome, exit_code: EXIT_RUNNER, message: e.message }, nonce);
    }
  });
}

if (process.argv[2] === CHILD_FLAG) childMain();
else parentMain();
