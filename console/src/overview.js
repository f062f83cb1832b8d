// overview.js - executors' health (GET /readyz) and, from the audit
// (GET /v1/audit, the newest 200 lines of the last hour), jobs per minute
// by outcome as a small inline SVG chart.
import { h, clear } from './dom.js';
import { api } from './api.js';

const SVG = 'http://www.w3.org/2000/svg';
function s(tag, attrs, ...kids) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const k of kids) el.appendChild(typeof k === 'string' ? document.createTextNode(k) : k);
  return el;
}

/** Bars per minute over the last 60 minutes, stacked ok / other. */
export function minuteChart(items, now) {
  const ok = new Array(60).fill(0), bad = new Array(60).fill(0);
  for (const it of items) {
    const m = Math.floor((now - Date.parse(it.time)) / 60000);
    if (m < 0 || m >= 60) continue;
    (it.outcome === 'success' || it.outcome === 'accept' ? ok : bad)[59 - m]++;
  }
  const max = Math.max(1, ...ok.map((v, i) => v + bad[i]));
  const svg = s('svg', { viewBox: '0 0 600 120', class: 'chart', role: 'img', 'aria-label': 'jobs per minute' });
  ok.forEach((v, i) => {
    const hOk = (v / max) * 100, hBad = (bad[i] / max) * 100;
    svg.appendChild(s('rect', { x: i * 10, y: 110 - hOk, width: 8, height: hOk, class: 'ok' }, s('title', {}, `${v} ok`)));
    svg.appendChild(s('rect', { x: i * 10, y: 110 - hOk - hBad, width: 8, height: hBad, class: 'bad' }, s('title', {}, `${bad[i]} other`)));
  });
  svg.appendChild(s('text', { x: 0, y: 120, class: 'axis' }, '60 min ago'));
  svg.appendChild(s('text', { x: 560, y: 120, class: 'axis' }, 'now'));
  return svg;
}

export async function overview(root) {
  clear(root).append(h('h1', {}, 'Overview'));
  const ready = await fetch('/readyz').then((r) => r.json()).catch(() => null);
  if (ready) {
    const rows = Object.entries(ready.executors || {}).flatMap(([lang, list]) =>
      list.map((e) => h('tr', {}, h('td', {}, lang), h('td', {}, e.url), h('td', { class: e.healthy ? 'ok' : 'err' }, e.healthy ? 'healthy' : 'down'),
        h('td', {}, String(e.inflight ?? '')))));
    root.append(h('p', { 'data-testid': 'ready' }, `gateway ${ready.status}; policies loaded ${ready.policies.loaded}; audit ${ready.audit.writable ? 'writable' : 'NOT writable'}`),
      h('table', {}, h('thead', {}, h('tr', {}, ['language', 'executor', 'health', 'jobs in flight'].map((c) => h('th', {}, c)))), h('tbody', {}, rows)));
  }
  const now = Date.now();
  const since = new Date(now - 3600000).toISOString();
  const r = await api('GET', `/v1/audit?limit=200&since=${encodeURIComponent(since)}`).catch(() => null);
  if (r) {
    const rules = {};
    for (const it of r.items) for (const rule of it.rules || []) rules[rule] = (rules[rule] || 0) + 1;
    root.append(h('h2', {}, 'Jobs per minute, last hour (newest 200 lines)'), minuteChart(r.items, now),
      h('h2', {}, 'Refusals by rule'),
      h('ul', {}, Object.entries(rules).sort((a, b) => b[1] - a[1]).map(([k, v]) => h('li', {}, `${k}: ${v}`))));
  }
  return null;
}
