// The SSE parser, with no server: frames split anywhere, line endings,
// multi-line data, heartbeats and comments, bounds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SSEParser, SSEError } from "../dist/esm/index.js";

const enc = (s) => new TextEncoder().encode(s);
const STREAM = enc('event: stdout\ndata: {"text":"first\\n"}\n\n' +
  ": hb\n\n" +
  'event: stderr\r\ndata: {"text":"café €"}\r\n\r\n' +
  'event: result\ndata: {"status":"success",\ndata: "x":1}\n\n');
const EXPECTED = [
  { event: "stdout", data: '{"text":"first\\n"}' },
  { event: "stderr", data: '{"text":"café €"}' },
  { event: "result", data: '{"status":"success",\n"x":1}' },
];

function parse(pieces, max) {
  const p = new SSEParser(max);
  return pieces.flatMap((piece) => p.feed(typeof piece === "string" ? enc(piece) : piece));
}

test("whole stream", () => assert.deepEqual(parse([STREAM]), EXPECTED));

test("split at every byte", () => {
  for (let i = 0; i <= STREAM.length; i++) {
    assert.deepEqual(parse([STREAM.subarray(0, i), STREAM.subarray(i)]), EXPECTED, `split at ${i}`);
  }
});

test("one byte at a time", () => {
  const pieces = [];
  for (let i = 0; i < STREAM.length; i++) pieces.push(STREAM.subarray(i, i + 1));
  assert.deepEqual(parse(pieces), EXPECTED);
});

test("a CRLF split between pieces is one line end", () => {
  assert.deepEqual(parse(["data: a\r", "\ndata: b\r", "\n\r", "\n"]), [{ event: "message", data: "a\nb" }]);
});

test("a lone CR ends lines", () => {
  assert.deepEqual(parse(["event: x\rdata: 1\r\r"]), [{ event: "x", data: "1" }]);
});

test("multi-line data is joined with newlines", () => {
  assert.deepEqual(parse(["data: one\ndata:two\ndata\ndata:  four\n\n"]),
    [{ event: "message", data: "one\ntwo\n\n four" }]);
});

test("heartbeats and comments between and inside events", () => {
  assert.deepEqual(parse([": hb\n\n:\nevent: stdout\n: hb\ndata: {}\n: x\n\n: hb\n\n"]),
    [{ event: "stdout", data: "{}" }]);
});

test("an event without data is not dispatched, and its name does not carry over", () => {
  assert.deepEqual(parse(["event: a\n\ndata: 1\n\n"]), [{ event: "message", data: "1" }]);
});

test("an incomplete event at the end is dropped", () => {
  assert.deepEqual(parse(["data: 1\n\ndata: 2\n"]), [{ event: "message", data: "1" }]);
});

test("BOM, id and unknown fields", () => {
  assert.deepEqual(parse([new Uint8Array([0xef, 0xbb, 0xbf]), "retry: 5\nfoo: bar\nid: 7\ndata: x\n\n"]),
    [{ event: "message", data: "x", id: "7" }]);
});

test("UTF-8 split inside a character", () => {
  const s = enc("data: €uro\n\n");
  assert.deepEqual(parse([s.subarray(0, 7), s.subarray(7, 8), s.subarray(8)]),
    [{ event: "message", data: "€uro" }]);
});

test("a line over the cap is an error", () => {
  const p = new SSEParser(100);
  p.feed(enc("data: " + "x".repeat(50)));
  assert.throws(() => p.feed(enc("x".repeat(60))), SSEError);
});

test("an event over the cap is an error", () => {
  const p = new SSEParser(100);
  assert.throws(() => p.feed(enc("data: 0123456789\n".repeat(10))), SSEError);
});

test("the cap counts per event", () => {
  const p = new SSEParser(100);
  for (let i = 0; i < 20; i++) assert.equal(p.feed(enc("data: 0123456789\n\n")).length, 1);
});
