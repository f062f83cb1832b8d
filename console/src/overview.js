// overview.js - executors' health and jobs in flight (GET /readyz), the warm
// pools per flavour and the jobs and sessions in flight (GET /v1/overview),
// and the last hour from the audit index (GET /v1/audit/summary): requests
// per minute by outcome, p50/p99 latency, refusals by rule. Charts are inline
// SVG drawn here; every label is a text node.
import { h, clear } from './dom.js';
import { api } from './api.js';

const SVG = 'http://www.w3.org/2000/svg';
const W = 600;
const H = 120;

function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const k of kids) el.appendChild(typeof k === 'string' ? document.createTextNode(k) : k);
  return el;
}

function frame(label) {
  const svg = s('svg', { viewBox: `0 0 ${W} ${H + 14}`, class: 'chart', role: 'img', 'aria-label': label });
  svg.appendChild(s('text', { x: 0, y: H + 12, class: 'axis' }, '60 min ago'));
  svg.appendChild(s('text', { x: W - 24, y: H + 12, class: 'axis' }, 'now'));
  return svg;
}

/** Stacked bars per minute: successes, then everything else. */
export function requestsChart(minutes) {
  const svg = frame('requests per minute by outcome');
  const max = Math.max(1, ...minutes.map((m) => m.requests));
  const step = W / minutes.length;
  minutes.forEach((m, i) => {
    const ok = m.outcomes.success || 0;
    const hOk = (ok / max) * (H - 10);
    const hOther = ((m.requests - ok) / max) * (H - 10);
    const tip = `${m.minute}: ${Object.entries(m.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`;
    svg.appendChild(s('rect', { x: i * step, y: H - hOk, width: step - 2, height: hOk, class: 'ok' }, s('title', {}, tip)));
    svg.appendChild(s('rect', { x: i * step, y: H - hOk - hOther, width: step - 2, height: hOther, class: 'bad' }, s('title', {}, tip)));
  });
  svg.appendChild(s('text', { x: 0, y: 10, class: 'axis' }, `max ${max}/min`));
  return svg;
}

/** p50 and p99 of total_ms per minute, as two lines. */
export function latencyChart(minutes) {
  const svg = frame('latency p50 and p99');
  const max = Math.max(1, ...minutes.map((m) => m.p99_ms || 0));
  const step = W / minutes.length;
  for (const [key, cls] of [['p50_ms', 'p50'], ['p99_ms', 'p99']]) {
    const pts = minutes.map((m, i) => (m[key] === null ? null : `${i * step + step / 2},${H - (m[key] / max) * (H - 10)}`)).filter(Boolean);
    if (pts.length) svg.appendChild(s('polyline', { points: pts.join(' '), class: `line ${cls}` }));
    for (const p of pts) {
      const [x, y] = p.split(',');
      svg.appendChild(s('circle', { cx: x, cy: y, r: 2.5, class: `dot ${cls}` }));
    }
  }
  svg.appendChild(s('text', { x: 0, y: 10, class: 'axis' }, `max ${max.toFixed(1)} ms (p99 dashed)`));
  return svg;
}

function rulesChart(rules) {
  const max = Math.max(1, ...rules.map((r) => r.count));
  const svg = s('svg', { viewBox: `0 0 ${W} ${Math.max(1, rules.length) * 18}`, class: 'chart rules', role: 'img', 'aria-label': 'refusals by rule' });
  rules.forEach((r, i) => {
    svg.appendChild(s('rect', { x: 220, y: i * 18 + 3, width: ((W - 260) * r.count) / max, height: 12, class: 'bad' }));
    svg.appendChild(s('text', { x: 0, y: i * 18 + 13, class: 'label' }, r.rule));
    svg.appendChild(s('text', { x: 224 + ((W - 260) * r.count) / max, y: i * 18 + 13, class: 'label' }, String(r.count)));
  });
  return svg;
}

/** One row per executor and flavour: size/target, idle, busy, creating, hits, fall-backs, creation time
 * (the executor's URL for an admin only: a tenant's answer has none). */
export function poolsTable(ov) {
  const urls = ov.executors.some((e) => e.url);
  const rows = ov.executors.flatMap((e) => (e.pools ? e.pools.flavours : []).map((f) =>
    h('tr', { 'data-testid': 'pool-row' }, h('td', {}, e.language), urls && h('td', {}, e.url || ''), h('td', {}, f.name),
      h('td', {}, `${f.size}/${f.target}`), h('td', {}, String(f.idle)), h('td', {}, String(f.busy)),
      h('td', {}, String(f.creating)), h('td', {}, String(f.hits)), h('td', {}, String(f.fallbacks)),
      h('td', {}, f.create_ms ? `${f.create_ms} ms` : ''))));
  const head = ['language', urls && 'executor', 'flavour', 'size/target', 'idle', 'busy', 'creating', 'hits', 'fall-backs', 'creation time'].filter(Boolean);
  return [
    h('p', { 'data-testid': 'in-flight' }, `jobs in flight: ${ov.jobs_in_flight}; sessions open: ${ov.sessions_open}`),
    rows.length
      ? h('table', { 'data-testid': 'pools' }, h('thead', {}, h('tr', {}, head.map((c) => h('th', {}, c)))), h('tbody', {}, rows))
      : h('p', { class: 'muted' }, 'no executor has reported its pools yet'),
  ];
}

async function render(root) {
  const ready = await fetch('/readyz').then((r) => r.json()).catch(() => null);
  const sum = await api('GET', '/v1/audit/summary').catch((e) => ({ error: e.message }));
  const ov = await api('GET', '/v1/overview').catch((e) => ({ error: e.message }));
  const parts = [h('h1', {}, 'Overview')];
  if (ready) {
    const rows = Object.entries(ready.executors || {}).flatMap(([lang, list]) => list.map((e) =>
      h('tr', {}, h('td', {}, lang), h('td', {}, e.url), h('td', { class: e.healthy ? 'ok' : 'err' }, e.healthy ? 'healthy' : 'down'),
        h('td', {}, String(e.inflight ?? '')))));
    parts.push(h('p', { 'data-testid': 'ready' }, `gateway ${ready.status}; ${ready.policies.loaded} policies loaded; audit log ${ready.audit.writable ? 'writable' : 'NOT writable'}, ${ready.audit.dropped} lines dropped`),
      h('table', { 'data-testid': 'executors' }, h('thead', {}, h('tr', {}, ['language', 'executor', 'health', 'jobs in flight'].map((c) => h('th', {}, c)))), h('tbody', {}, rows)));
  }
  parts.push(h('h2', {}, 'Warm pools and work in flight'),
    ...(ov.error ? [h('p', { class: 'err' }, `overview: ${ov.error}`)] : poolsTable(ov)));
  if (sum.error) {
    parts.push(h('p', { class: 'err' }, `audit summary: ${sum.error}`));
  } else {
    const total = sum.minutes.reduce((a, m) => a + m.requests, 0);
    parts.push(h('h2', {}, `Requests per minute by outcome (last hour: ${total})`), requestsChart(sum.minutes),
      h('h2', {}, 'Latency p50 / p99 (total_ms)'), latencyChart(sum.minutes),
      h('h2', {}, 'Rules that fired most'), sum.rules.length ? rulesChart(sum.rules) : h('p', { class: 'muted' }, 'none in the last hour'));
  }
  clear(root).append(...parts);
}

export async function overview(root) {
  await render(root);
  const timer = setInterval(() => render(root).catch(() => {}), 10000);
  return () => clearInterval(timer);
}
