// js_oracle.js - V8's side of the JavaScript differential fuzzer
// (tests/fuzz/diff/diff_common.h has the protocol). Run with
// `node --expose-internals` for the acorn Node ships.
//
// For each source: does V8 compile it the way the Node runner does
// (images/nodejs/runner.js: a CommonJS function body via vm.compileFunction,
// a leading #! turned into a comment, the main hook appended)? If not, the
// job could not run: "runtime-rejects". V8 exposes no syntax tree, so the
// structure comes from acorn (Node's own copy) reading the same wrapper;
// if acorn rejects what V8 compiles the answer is "oracle-rejects". The
// summary (identifiers, member names, calls, string and regex literals) is
// compared with the one the harness made from tree-sitter's tree; tree-sitter's
// string literals arrive as source text and are evaluated here by acorn.
'use strict';
const vm = require('vm');
const acorn = require('internal/deps/acorn/acorn/dist/acorn');

const HOOK = '__sandgate_main_0123456789abcdef';
const PARAMS = ['exports', 'require', 'module', '__filename', '__dirname', HOOK];

function bodyOf(source) {
  if (source.startsWith('#!')) source = `//${source.slice(2)}`;
  return `${source}\n;if (typeof main === "function") ${HOOK}(main);`;
}

function summarise(fnBody) {
  const ids = []; const attrs = []; const strs = []; const regexes = [];
  let calls = 0;
  const stmts = fnBody.body.slice(0, -1); // drop the appended hook statement
  const stack = stmts.slice().reverse();
  while (stack.length) {
    const n = stack.pop();
    if (!n || typeof n.type !== 'string') continue;
    switch (n.type) {
      case 'Identifier': ids.push(n.name); break;
      case 'PrivateIdentifier': ids.push(`#${n.name}`); break;
      case 'CallExpression': case 'NewExpression':
      case 'TaggedTemplateExpression': case 'ImportExpression': calls++; break;
      case 'MetaProperty': continue; // new.target, import.meta: keywords to tree-sitter
      case 'Literal':
        if (n.regex) regexes.push(`/${n.regex.pattern}/${n.regex.flags}`);
        else if (typeof n.value === 'string') strs.push(JSON.stringify(n.value));
        continue;
      case 'MemberExpression':
        if (!n.computed) {
          const p = n.property;
          attrs.push(p.type === 'PrivateIdentifier' ? `#${p.name}` : p.name);
          stack.push(n.object);
          continue;
        }
        break;
      default: break;
    }
    const kids = [];
    for (const k of Object.keys(n)) {
      if (k === 'type' || k === 'start' || k === 'end') continue;
      const v = n[k];
      if (Array.isArray(v)) for (const e of v) kids.push(e);
      else if (v && typeof v === 'object' && typeof v.type === 'string') kids.push(v);
    }
    // shorthand {a} has key and value as the same node: count it once
    if (n.type === 'Property' && n.shorthand) kids.splice(kids.indexOf(n.key), 1);
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return { ids, attrs, calls, strs, regexes };
}

function count(list) {
  const m = new Map();
  for (const x of list) m.set(x, (m.get(x) || 0) + 1);
  return m;
}

function diffLists(what, mine, theirs) {
  const a = count(mine); const b = count(theirs);
  const onlyA = []; const onlyB = [];
  for (const [k, v] of a) for (let i = (b.get(k) || 0); i < v; i++) onlyA.push(k);
  for (const [k, v] of b) for (let i = (a.get(k) || 0); i < v; i++) onlyB.push(k);
  if (!onlyA.length && !onlyB.length) return null;
  return `${what}: acorn only ${JSON.stringify(onlyA.sort())}, tree-sitter only ${JSON.stringify(onlyB.sort())}`;
}

function judge(srcBuf, summaryBuf) {
  const source = srcBuf.toString('utf8');
  const body = bodyOf(source);
  try {
    vm.compileFunction(body, PARAMS, { filename: 'main.js' });
  } catch (e) {
    return { verdict: 'runtime-rejects', detail: String(e) };
  }
  let fn;
  let prefix = '';
  try {
    prefix = `(function (${PARAMS.join(', ')}) {\n`;
    const wrapped = `${prefix}${body}\n})`;
    const prog = acorn.parse(wrapped, { ecmaVersion: 'latest', sourceType: 'script' });
    fn = prog.body[0].expression.body;
  } catch (e) {
    return { verdict: 'oracle-rejects', detail: String(e) };
  }
  const last = fn.body[fn.body.length - 1];
  if (!last || last.type !== 'IfStatement' || last.start < prefix.length + source.length)
    return { verdict: 'differs', detail: 'the appended main hook did not stay a statement of its own' };
  const mine = summarise(fn);
  const ts = JSON.parse(summaryBuf.toString('utf8'));
  const tsStrs = [];
  for (const text of ts.strs) {
    let v;
    try {
      const e = acorn.parseExpressionAt(text, 0, { ecmaVersion: 'latest' });
      if (e.type !== 'Literal' || typeof e.value !== 'string' || e.end !== text.length) throw new Error(e.type);
      v = e.value;
    } catch (e) {
      return { verdict: 'differs', detail: `tree-sitter string ${JSON.stringify(text)} is not a string literal for acorn: ${e}` };
    }
    tsStrs.push(JSON.stringify(v));
  }
  // an identifier may spell letters as \u escapes; the analyzer decodes them
  // before any rule looks at a name (policies/README.md), as V8 does
  const unescape = (id) => id.replace(/\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})/g,
    (_, a, b) => String.fromCodePoint(parseInt(a || b, 16)));
  const problems = [
    diffLists('identifiers', mine.ids, ts.ids.map(unescape)),
    diffLists('members', mine.attrs, ts.attrs.map(unescape)),
    mine.calls === ts.calls ? null : `calls: acorn ${mine.calls}, tree-sitter ${ts.calls}`,
    diffLists('strings', mine.strs, tsStrs),
    diffLists('regexes', mine.regexes, ts.regexes),
  ].filter((p) => p);
  return problems.length ? { verdict: 'differs', detail: problems.join('; ') } : { verdict: 'same', detail: '' };
}

// Frames: 4-byte little-endian length, then the bytes.
let buf = Buffer.alloc(0);
const pending = [];
process.stdin.on('data', (chunk) => {
  buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
  const out = [];
  for (;;) {
    if (buf.length < 4) break;
    const n = buf.readUInt32LE(0);
    if (buf.length < 4 + n) break;
    pending.push(buf.subarray(4, 4 + n));
    buf = buf.subarray(4 + n);
    if (pending.length === 2) {
      let reply;
      try { reply = judge(pending[0], pending[1]); } catch (e) {
        reply = { verdict: 'differs', detail: `oracle error: ${e && e.stack}` };
      }
      pending.length = 0;
      const data = Buffer.from(JSON.stringify(reply));
      const head = Buffer.alloc(4); head.writeUInt32LE(data.length, 0);
      out.push(head, data);
    }
  }
  if (out.length) process.stdout.write(Buffer.concat(out));
});
