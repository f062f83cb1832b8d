// The client against a scripted HTTP server on loopback (no sandgate): error
// classes, which answers are retried and which never are, the token, streams
// and what ending one early does, AbortSignal, sessions; and the CommonJS build.
import { test, beforeEach, afterEach } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { createRequire } from "node:module";
import * as sg from "../dist/esm/index.js";

const OK = {
  status: "success", stdout: "hi\n", stderr: "", exit_code: 0, detail: null,
  result: { present: true, value: { n: 42 }, type: "json" }, job_id: "j1",
  artifacts: [{ name: "a.txt", mime_type: "text/plain", size: 2, content_b64: "aGk=" }],
  violations: [], timings: { total_ms: 3 },
};
const REJECTED = {
  status: "program_runner_error", stdout: "", exit_code: -999, detail: "Code is unsafe",
  stderr: "Line 1: ...", result: { present: false, value: null, type: "json" }, artifacts: [],
  violations: [{ rule: "import.not-allowed", severity: "error", line: 1, column: 8,
                 message: "import of module 'os' is not allowed" }],
};
const error = (status, code, headers = {}) =>
  [status, { error: { code, message: `${code} happened` } }, headers];

let fake;

function startFake() {
  const f = { script: [], seen: [] };
  f.server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      f.seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      const step = f.script.shift() ?? [500, { error: {} }, {}];
      if (typeof step === "function") return step(req, res);
      const [status, payload, headers] = step;
      const raw = Buffer.isBuffer(payload) ? payload : Buffer.from(JSON.stringify(payload));
      res.writeHead(status, { "Content-Length": raw.length, "X-Request-Id": "req0000000000001", ...headers });
      res.end(raw);
    });
  });
  return new Promise((resolve) => f.server.listen(0, "127.0.0.1", () => {
    f.url = `http://127.0.0.1:${f.server.address().port}`;
    resolve(f);
  }));
}

beforeEach(async () => { fake = await startFake(); });
afterEach(() => { fake.server.closeAllConnections(); fake.server.close(); });

const client = (o = {}) => new sg.Client({ url: fake.url, token: "tok", retries: 2, maxRetryDelayMs: 50, ...o });
const paths = () => fake.seen.map((s) => `${s.method} ${s.url}`);

test("run: result, token and body", async () => {
  fake.script = [[200, OK, {}]];
  const r = await client().run("def main():\n    return 1\n", {
    arguments: { a: 1 }, files: { "in.txt": new Uint8Array([120]) }, limits: { timeout_ms: 500 },
  });
  assert.deepEqual([r.ok, r.value, r.stdout, r.jobId], [true, { n: 42 }, "hi\n", "j1"]);
  assert.equal(r.artifacts[0].name, "a.txt");
  assert.deepEqual([...r.artifacts[0].data], [104, 105]);
  const s = fake.seen[0];
  assert.equal(`${s.method} ${s.url} ${s.headers.authorization}`, "POST /v1/run Bearer tok");
  assert.deepEqual(JSON.parse(s.body), {
    language: "python", code: "def main():\n    return 1\n", arguments: { a: 1 },
    files: { "in.txt": "eA==" }, limits: { timeout_ms: 500 },
  });
});

test("url and token from the environment", async () => {
  fake.script = [[200, { tenant: { name: "t" } }, {}]];
  process.env.SANDGATE_URL = fake.url + "/";
  process.env.SANDGATE_TOKEN = "envtok";
  try {
    assert.equal((await new sg.Client().whoami()).tenant.name, "t");
  } finally {
    delete process.env.SANDGATE_URL;
    delete process.env.SANDGATE_TOKEN;
  }
  assert.equal(fake.seen[0].headers.authorization, "Bearer envtok");
});

test("a rejection throws PolicyViolation with rule and line", async () => {
  fake.script = [[200, REJECTED, {}]];
  await assert.rejects(client().run("import os"), (e) => {
    assert.ok(e instanceof sg.PolicyViolation);
    assert.deepEqual([e.violations[0].rule, e.violations[0].line, e.violations[0].column],
      ["import.not-allowed", 1, 8]);
    assert.equal(e.result.exitCode, -999);
    return true;
  });
});

test("error classes", async () => {
  const cases = [
    [error(401, "unauthorized"), sg.Unauthorized], [error(400, "bad_json"), sg.BadRequest],
    [error(403, "policy_not_allowed"), sg.Forbidden], [error(404, "session_not_found"), sg.SessionNotFound],
    [error(409, "job_ended"), sg.JobEnded], [error(409, "something_new"), sg.Conflict],
    [error(410, "session_lost"), sg.SessionLost], [error(413, "code_too_large"), sg.PayloadTooLarge],
    [error(429, "too_many_sessions"), sg.TooManySessions], [error(502, "executor_failed"), sg.ExecutorFailed],
    [error(503, "executor_busy"), sg.Busy], [[418, Buffer.from("<html>teapot</html>"), {}], sg.APIError],
  ];
  for (const [answer, cls] of cases) {
    fake.script = [answer];
    await assert.rejects(client().run("x"), (e) => {
      assert.equal(e.constructor, cls, answer[1]?.error?.code);
      assert.equal(e.status, answer[0]);
      assert.equal(e.requestId, "req0000000000001");
      return true;
    });
  }
});

test("rate limited carries retryAfter and is not retried", async () => {
  fake.script = [error(429, "rate_limited", { "Retry-After": "3" }), [200, OK, {}]];
  await assert.rejects(client().run("x"), (e) => e instanceof sg.RateLimited && e.retryAfter === 3);
  assert.equal(fake.seen.length, 1);
});

test("an unreachable executor is retried, within the budget", async () => {
  fake.script = [error(502, "executor_unreachable"), error(502, "executor_unreachable"), [200, OK, {}]];
  assert.ok((await client().run("x")).ok);
  assert.equal(fake.seen.length, 3);
  fake.script = Array(5).fill(error(502, "executor_unreachable"));
  await assert.rejects(client().run("x"), sg.ExecutorUnreachable);
  assert.equal(fake.seen.length, 6);
});

test("busy is retried only with Retry-After", async () => {
  fake.script = [error(503, "executor_busy", { "Retry-After": "1" }), [200, OK, {}]];
  const t0 = Date.now();
  assert.ok((await client().run("x")).ok);
  assert.ok(Date.now() - t0 < 1000, "Retry-After is capped by maxRetryDelayMs");
  fake.script = [error(503, "executor_busy"), [200, OK, {}]];
  await assert.rejects(client().run("x"), sg.Busy);
  assert.equal(fake.seen.length, 3);
});

test("a job that may have run is never sent again", async () => {
  fake.script = [error(502, "executor_failed"), [200, OK, {}]];
  await assert.rejects(client().run("x"), sg.ExecutorFailed);
  fake.script = [(req, res) => res.socket.destroy(), [200, OK, {}]];
  await assert.rejects(client().run("x"), sg.TransportError);
  assert.equal(fake.seen.length, 2);
});

test("a refused connection is retried", async () => {
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const late = http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify(OK));
  });
  setTimeout(() => late.listen(port, "127.0.0.1"), 100);
  try {
    const c = new sg.Client({ url: `http://127.0.0.1:${port}`, retries: 20, maxRetryDelayMs: 200 }); // 4 s
    assert.ok((await c.run("x")).ok);
  } finally {
    late.close();
  }
  const dead = new sg.Client({ url: `http://127.0.0.1:${port}`, retries: 1, maxRetryDelayMs: 0 });
  await assert.rejects(dead.run("x"), (e) => e instanceof sg.TransportError && /refused/.test(e.message));
});

function sse(events, hold) {
  return (req, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream", "X-Request-Id": "job0000000000042" });
    for (const [name, data] of events) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n: hb\n\n`);
    if (hold) hold.then(() => res.end());
    else res.end();
  };
}

test("a stream yields the pieces, then the result", async () => {
  fake.script = [sse([["stdout", { text: "a\n" }], ["stderr", { text: "w" }], ["future_event", {}], ["result", OK]])];
  const s = await client().stream("x");
  assert.equal(s.jobId, "job0000000000042");
  const events = [];
  for await (const ev of s) events.push(ev);
  assert.deepEqual(events.slice(0, 2), [{ type: "stdout", text: "a\n" }, { type: "stderr", text: "w" }]);
  assert.deepEqual(events[2].result.value, { n: 42 });
  assert.equal(events.length, 3);
  assert.equal(JSON.parse(fake.seen[0].body).stream, true);
  assert.equal(fake.seen.length, 1, "no cancel after a result");
});

test("a rejection and an error event throw from the stream", async () => {
  fake.script = [sse([["result", REJECTED]])];
  await assert.rejects((await client().stream("import os")).wait(), sg.PolicyViolation);
  fake.script = [sse([["stdout", { text: "a" }], ["result", { error: { code: "executor_failed", message: "died" } }]])];
  const s = await client().stream("x");
  assert.deepEqual((await s.next()).value, { type: "stdout", text: "a" });
  await assert.rejects(s.next(), sg.ExecutorFailed);
});

test("breaking out of for await cancels the job and hangs up", async () => {
  let release;
  const hold = new Promise((r) => { release = r; });
  let hungUp = false;
  fake.script = [(req, res) => { res.on("close", () => { hungUp = true; }); sse([["stdout", { text: "started\n" }]], hold)(req, res); },
    [202, { job_id: "job0000000000042", status: "cancelling" }, {}]];
  for await (const ev of await client().stream("x")) {
    assert.deepEqual(ev, { type: "stdout", text: "started\n" });
    break;
  }
  assert.deepEqual(paths(), ["POST /v1/run", "POST /v1/jobs/job0000000000042/cancel"]);
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(hungUp, "the stream's connection was closed");
  release();
});

test("an AbortSignal stops a run: cancel, hang-up, rejects with its reason", async () => {
  let release;
  const hold = new Promise((r) => { release = r; });
  fake.script = [sse([["stdout", { text: "started\n" }]], hold), [202, {}, {}]];
  const ac = new AbortController();
  const running = client().run("x", { signal: ac.signal });
  await new Promise((r) => setTimeout(r, 100));
  ac.abort(new Error("enough"));
  await assert.rejects(running, /enough/);
  assert.deepEqual(paths(), ["POST /v1/run", "POST /v1/jobs/job0000000000042/cancel"]);
  release();
});

test("a JSON answer to a stream is its result", async () => {
  fake.script = [[200, OK, { "Content-Type": "application/json" }],
    [200, Buffer.from("not json"), { "Content-Type": "application/json" }]];
  const events = [];
  for await (const ev of await client().stream("x")) events.push(ev);
  assert.deepEqual(events.map((e) => e.type), ["result"]);
  assert.deepEqual(events[0].result.value, { n: 42 });
  await assert.rejects((await client().stream("x")).wait(), sg.TransportError);
});

test("a stream that ends without a result is an error", async () => {
  fake.script = [sse([["stdout", { text: "a" }]])];
  await assert.rejects((await client().stream("x")).wait(), sg.TransportError);
});

test("a session stream ended early interrupts the cell and waits until idle", async () => {
  let release;
  const hold = new Promise((r) => { release = r; });
  fake.script = [[201, { session_id: "py-1", language: "python" }, {}],
    sse([["stdout", { text: "started\n" }]], hold), [202, { cancel_sent: true }, {}],
    [200, { state: "busy" }, {}], [200, { state: "idle" }, {}], [204, Buffer.alloc(0), {}]];
  const s = await client().session();
  for await (const ev of await s.execStream("long")) {
    assert.deepEqual(ev, { type: "stdout", text: "started\n" });
    break;
  }
  release();
  await s.close();
  const p = "/v1/sessions/py-1";
  assert.deepEqual(paths(), ["POST /v1/sessions", `POST ${p}/exec`, `POST ${p}/cancel`,
    `GET ${p}`, `GET ${p}`, `DELETE ${p}`]);
});

test("session lifecycle", async () => {
  const cell = { ...OK, session_id: "py-ab/c", session_lost: false };
  fake.script = [[201, { session_id: "py-ab/c", language: "python" }, {}], error(409, "session_busy"),
    [200, cell, {}], [204, Buffer.alloc(0), {}], [200, Buffer.from("a,b\n"), {}],
    [200, { files: [{ name: "d.csv", size: 4 }] }, {}], error(409, "no_cell_running"),
    error(410, "session_lost")];
  const s = await client().session({ timeoutMs: 900 });
  assert.deepEqual((await s.exec("x + 1")).value, { n: 42 });
  await s.upload("d.csv", "a,b\n");
  assert.equal(new TextDecoder().decode(await s.download("d.csv")), "a,b\n");
  assert.deepEqual(await s.files(), [{ name: "d.csv", size: 4 }]);
  assert.equal(await s.interrupt(), false);
  await s[Symbol.asyncDispose]();
  assert.ok(s.closed);
  const p = "/v1/sessions/py-ab%2Fc";
  assert.deepEqual(paths(), ["POST /v1/sessions", `POST ${p}/exec`, `POST ${p}/exec`,
    `PUT ${p}/files/d.csv`, `GET ${p}/files/d.csv`, `GET ${p}/files`, `POST ${p}/cancel`, `DELETE ${p}`]);
  assert.deepEqual(JSON.parse(fake.seen[0].body), { language: "python", limits: { timeout_ms: 900 } });
  assert.equal(fake.seen[3].body.toString(), "a,b\n");
});

test("the CommonJS build is the same client", async () => {
  const cjs = createRequire(import.meta.url)("../dist/cjs/index.js");
  fake.script = [[200, REJECTED, {}]];
  await assert.rejects(new cjs.Client({ url: fake.url }).run("import os"), cjs.PolicyViolation);
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(sg).sort());
});
