// The TypeScript client against a running sandgate (gateway, executors,
// dockerd + runsc): tests/e2e/test_clients.py starts one and runs this
// (`node --test live/`) with SANDGATE_URL, SANDGATE_TOKEN,
// SANDGATE_TEST_LIMITED_TOKEN (a tenant with a tiny rate) and
// SANDGATE_TEST_AUDIT_LOG (the gateway's audit log) set.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as sg from "../dist/esm/index.js";

const ENV = ["SANDGATE_URL", "SANDGATE_TOKEN", "SANDGATE_TEST_LIMITED_TOKEN", "SANDGATE_TEST_AUDIT_LOG"];
const PRINT_SLEEP_PRINT = "import time\n\ndef main():\n    print('first')\n    time.sleep(1)\n" +
  "    print('second')\n    return 7\n";
const LONG = "import time\n\ndef main():\n    print('started')\n    time.sleep(30)\n";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let c;

before(() => {
  const missing = ENV.filter((k) => !process.env[k]);
  assert.deepEqual(missing, [], "tests/e2e/test_clients.py sets these");
  c = new sg.Client();
});

async function auditOutcome(jobId) {
  for (let i = 0; i < 200; i++) {
    for (const line of readFileSync(process.env.SANDGATE_TEST_AUDIT_LOG, "utf8").split("\n")) {
      if (!line) continue;
      const a = JSON.parse(line);
      if (a.request_id === jobId) return a.outcome;
    }
    await sleep(50);
  }
  throw new Error(`no audit line for job ${jobId}`);
}

test("a job", async () => {
  const r = await c.run("def main(a, b):\n    print('adding')\n    return {'sum': a + b}\n",
    { arguments: { a: 2, b: 3 }, files: { "in.txt": "x" } });
  assert.deepEqual([r.status, r.ok, r.value, r.stdout], ["success", true, { sum: 5 }, "adding\n"]);
  assert.equal(r.jobId.length, 16);
});

test("artifacts come back as bytes", async () => {
  const r = await c.run("def main():\n    open('artifacts/out.csv', 'wb').write(b'a,b\\n0,\\xff\\n')\n");
  assert.deepEqual(r.artifacts.map((a) => [a.name, [...a.data]]),
    [["out.csv", [97, 44, 98, 10, 48, 44, 255, 10]]], JSON.stringify(r.raw));
});

test("a JavaScript job", async () => {
  const r = await c.run("function main(a) { return a.n * 2; }\nmodule.exports = { main };",
    { language: "nodejs", arguments: { n: 21 } });
  assert.equal(r.value, 42, JSON.stringify(r.raw));
});

test("a rejection throws PolicyViolation with rule and line", async () => {
  await assert.rejects(c.run("x = 1\nimport subprocess\n\ndef main():\n    return 1\n"), (e) => {
    assert.ok(e instanceof sg.PolicyViolation, String(e));
    assert.deepEqual([e.violations[0].rule, e.violations[0].line], ["import.not-allowed", 2]);
    return true;
  });
  const a = await c.analyze("import subprocess\n");
  assert.deepEqual([a.accepted, a.violations[0].rule], [false, "import.not-allowed"]);
});

test("the first stdout arrives before the job ends", async () => {
  const t0 = Date.now();
  const seen = [];
  const s = await c.stream(PRINT_SLEEP_PRINT);
  for await (const ev of s) seen.push([Date.now() - t0, ev]);
  const first = seen.find(([, ev]) => ev.type === "stdout")[0];
  const [tEnd, last] = seen.at(-1);
  assert.equal(last.type, "result");
  assert.ok(tEnd - first >= 800, JSON.stringify(seen));
  assert.equal(seen.filter(([, ev]) => ev.type === "stdout").map(([, ev]) => ev.text).join(""), "first\nsecond\n");
  assert.deepEqual([last.result.value, last.result.jobId], [7, s.jobId]);
});

test("cancel", async () => {
  const s = await c.stream(LONG);
  assert.deepEqual((await s.next()).value, { type: "stdout", text: "started\n" });
  await c.cancel(s.jobId);
  const r = await s.wait();
  assert.deepEqual([r.status, r.exitCode], ["cancelled", -130]);
  await assert.rejects(c.cancel(s.jobId), sg.JobEnded);
  await assert.rejects(c.cancel("0123456789abcdef"), sg.JobNotFound);
});

test("breaking out of a stream cancels the job", async () => {
  const t0 = Date.now();
  const s = await c.stream(LONG);
  for await (const ev of s) {
    assert.deepEqual(ev, { type: "stdout", text: "started\n" });
    break;
  }
  assert.ok(["cancelled", "client_gone"].includes(await auditOutcome(s.jobId)));
  assert.ok(Date.now() - t0 < 20000, "the job did not run its 30 s");
});

test("an AbortSignal cancels a run", async () => {
  const ac = new AbortController();
  const running = c.run(LONG, { signal: ac.signal });
  await sleep(1500);
  ac.abort();
  await assert.rejects(running, { name: "AbortError" });
});

test("a session keeps state and files", async () => {
  const s = await c.session();
  try {
    assert.ok(s.id.startsWith("py-"));
    await s.exec("x = 41");
    assert.equal((await s.exec("x + 1")).value, 42);
    await s.upload("data.csv", new TextEncoder().encode("a,b\n1,2\n"));
    const r = await s.exec("rows = open('data.csv').read().splitlines()\nopen('out.txt', 'w').write(str(len(rows)))\nlen(rows)");
    assert.equal(r.value, 2);
    assert.equal(new TextDecoder().decode(await s.download("data.csv")), "a,b\n1,2\n");
    assert.equal(new TextDecoder().decode(await s.download("out.txt")), "2");
    assert.ok((await s.files()).some((f) => f.name === "data.csv" && f.size === 8));
    await assert.rejects(s.download("nothing.txt"), sg.FileNotFound);
    await assert.rejects(s.exec("import subprocess"), sg.PolicyViolation);
    const pieces = [];
    for await (const ev of await s.execStream("print(x)\nx * 2")) pieces.push(ev);
    assert.deepEqual(pieces[0], { type: "stdout", text: "41\n" });
    assert.equal(pieces.at(-1).result.value, 82);
    assert.equal(await s.interrupt(), false);
  } finally {
    await s.close();
  }
  assert.ok(s.closed);
  await assert.rejects(s.exec("x"), sg.SessionNotFound);
});

test("a session stream ended early interrupts the cell", async () => {
  const s = await c.session();
  try {
    await s.exec("kept = 'yes'");
    const t0 = Date.now();
    for await (const ev of await s.execStream("import time\nprint('started')\ntime.sleep(30)")) {
      assert.deepEqual(ev, { type: "stdout", text: "started\n" });
      break;
    }
    assert.equal((await s.exec("kept")).value, "yes");
    assert.ok(Date.now() - t0 < 20000, "the cell did not run its 30 s");
  } finally {
    await s.close();
  }
});

test("a 429 surfaces retryAfter", async () => {
  const limited = new sg.Client({ token: process.env.SANDGATE_TEST_LIMITED_TOKEN, retries: 0 });
  await assert.rejects(async () => {
    for (let i = 0; i < 5; i++) await limited.analyze("x = 1\n");
  }, (e) => {
    assert.ok(e instanceof sg.RateLimited, String(e));
    assert.equal(e.code, "rate_limited");
    assert.ok(e.retryAfter > 0);
    return true;
  });
});

test("unauthorized, whoami, runtimes", async () => {
  await assert.rejects(new sg.Client({ token: "not-a-token-of-any-tenant-000000" }).whoami(), sg.Unauthorized);
  assert.equal((await c.whoami()).tenant.identified_by, "token");
  assert.ok((await c.runtimes()).runtimes.python.available);
});
