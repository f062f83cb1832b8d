// audit.js - the audit table (filters, cursor pages) and one job's page
// (its code with each violation underlined, rules, limits, timings, outcome).
import { h, clear, fmtMs } from './dom.js';
import { api } from './api.js';

const FILTERS = [
  ['tenant', 'tenant'], ['endpoint', 'endpoint'], ['language', 'language'], ['policy', 'policy'],
  ['verdict', 'verdict'], ['outcome', 'outcome'], ['status', 'HTTP status'], ['rule', 'rule'],
  ['since', 'since (UTC)'], ['until', 'until (UTC)'],
];
const COLUMNS = ['time', 'tenant', 'endpoint', 'language', 'policy', 'verdict', 'outcome', 'rules', 'duration', 'request id'];

function cell(item, col) {
  switch (col) {
    case 'rules': return (item.rules || []).join(', ');
    case 'duration': return fmtMs(item.total_ms);
    case 'request id': return item.request_id;
    case 'endpoint': return item.tool ? `${item.endpoint} (${item.tool})` : item.endpoint;
    case 'policy': return item.policy_sha256 ? `${item.policy} ${item.policy_sha256.slice(0, 8)}` : item.policy;
    default: return item[col];
  }
}

/** The query string of the filled-in filters. */
function query(values, cursor) {
  const q = new URLSearchParams();
  for (const [k] of FILTERS) if (values[k]) q.set(k, values[k]);
  if (cursor) q.set('cursor', cursor);
  q.set('limit', '50');
  return q.toString();
}

export async function auditList(root, params) {
  const values = Object.fromEntries(FILTERS.map(([k]) => [k, params.get(k) || '']));
  const inputs = {};
  const form = h('form', { class: 'filters', 'data-testid': 'filters', onsubmit: (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k] of FILTERS) if (inputs[k].value.trim()) q.set(k, inputs[k].value.trim());
    location.hash = `#/audit?${q}`;
  } },
  FILTERS.map(([k, label]) => h('label', {}, label,
    inputs[k] = h('input', { name: k, value: values[k], 'data-testid': `filter-${k}`,
      placeholder: k === 'since' || k === 'until' ? '2026-11-26T00:00:00Z' : '' }))),
  h('button', { type: 'submit', class: 'primary', 'data-testid': 'apply' }, 'Search'));
  const body = h('tbody', {});
  const more = h('button', { 'data-testid': 'more', hidden: true }, 'Older');
  const note = h('p', { class: 'muted', 'data-testid': 'audit-note' });
  let cursor = null;
  async function page() {
    try {
      const r = await api('GET', `/v1/audit?${query(values, cursor)}`);
      for (const item of r.items) {
        const link = h('a', { href: `#/audit/${encodeURIComponent(item.request_id)}` }, cell(item, 'request id'));
        body.append(h('tr', { class: item.verdict === 'reject' ? 'rejected' : '' },
          COLUMNS.map((c) => h('td', {}, c === 'request id' ? link : cell(item, c)))));
      }
      cursor = r.next_cursor;
      more.hidden = !cursor;
      note.textContent = body.children.length ? '' : 'No audit lines match.';
    } catch (e) {
      note.textContent = e.message;
    }
  }
  more.addEventListener('click', page);
  clear(root).append(h('h1', {}, 'Audit'), form,
    h('table', { class: 'audit', 'data-testid': 'audit-table' },
      h('thead', {}, h('tr', {}, COLUMNS.map((c) => h('th', {}, c)))), body),
    note, more);
  await page();
}

/** The code, one row per line, each violation's columns underlined and its message beside. */
function codeView(code, violations) {
  const lines = code.split('\n');
  const byLine = new Map();
  for (const v of violations) {
    if (!byLine.has(v.line)) byLine.set(v.line, []);
    byLine.get(v.line).push(v);
  }
  return h('div', { class: 'code', 'data-testid': 'job-code' }, lines.map((text, i) => {
    const vs = byLine.get(i + 1) || [];
    const parts = [];
    let at = 0;
    for (const v of [...vs].sort((a, b) => a.column - b.column)) {
      const from = Math.max(Math.min(v.column - 1, text.length), at);
      const to = v.end_line === v.line ? Math.max(Math.min(v.end_column - 1, text.length), from + 1) : text.length;
      parts.push(text.slice(at, from));
      parts.push(h('span', { class: 'violation', title: `${v.rule}: ${v.message}`, 'data-rule': v.rule }, text.slice(from, to) || ' '));
      at = Math.min(to, text.length);
    }
    parts.push(text.slice(at));
    return h('div', { class: vs.length ? 'line flagged' : 'line' },
      h('span', { class: 'ln' }, String(i + 1)), h('code', {}, parts),
      vs.map((v) => h('span', { class: 'why', 'data-testid': 'violation-message' }, `${v.rule}: ${v.message}`)));
  }));
}

export async function auditJob(root, id) {
  clear(root).append(h('h1', {}, `Job ${id}`));
  let e;
  try {
    e = await api('GET', `/v1/audit/${encodeURIComponent(id)}`);
  } catch (err) {
    root.append(h('p', { class: 'err', 'data-testid': 'job-error' }, err.message));
    return;
  }
  const violations = e.violations || [];
  const staticRules = new Set(violations.map((v) => v.rule));
  const runtime = (e.rules || []).filter((r) => !staticRules.has(r));
  const rows = [
    ['time', e.time], ['tenant', e.tenant], ['endpoint', e.tool ? `${e.endpoint} (${e.tool})` : e.endpoint],
    ['language', e.language], ['policy', e.policy && `${e.policy} (sha256 ${e.policy_sha256})`],
    ['verdict', e.verdict], ['outcome', e.outcome], ['HTTP status', e.status],
    ['run-time denials', runtime.join(', ') || (e.verdict === 'accept' ? 'none' : '')],
    ['limits', e.limits && JSON.stringify(e.limits)],
    ['timings', `analysis ${fmtMs(e.analysis_ms)}, run ${fmtMs(e.exec_ms)}, total ${fmtMs(e.total_ms)}`],
    ['executor', e.executor], ['code', e.code_bytes !== undefined ? `${e.code_bytes} bytes, sha256 ${e.code_sha256}` : ''],
    ['session', e.session_id], ['peer', e.peer],
  ];
  root.append(h('dl', { class: 'job', 'data-testid': 'job-fields' },
    rows.filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])));
  if (violations.length) {
    root.append(h('h2', {}, 'Violations'), h('ul', { 'data-testid': 'violations' },
      violations.map((v) => h('li', {}, `line ${v.line}, column ${v.column}: ${v.rule}: ${v.message}`))));
  }
  if (typeof e.code === 'string') {
    root.append(h('h2', {}, e.code_truncated ? 'Code (first 8 KiB)' : 'Code'), codeView(e.code, violations));
  } else {
    root.append(h('p', { class: 'muted' }, e.code_omitted ? `Code not kept: ${e.code_omitted}.`
      : 'Code not kept (the tenant\'s audit_code setting).'));
  }
}
