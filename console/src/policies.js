// policies.js - the policies this token may use: for each language its
// modules, forbidden names, calls and attributes, run-time rules, what it
// extends (GET /v1/policies/{name}), and the packages a job may import from
// the executors' images (GET /v1/runtimes).
import { h, clear } from './dom.js';
import { api } from './api.js';

const LANGS = [['python', 'python', 'Python'], ['javascript', 'nodejs', 'JavaScript']];
const LISTS = [['forbidden_names', 'forbidden names'], ['forbidden_calls', 'forbidden calls'],
  ['forbidden_attributes', 'forbidden attributes'], ['network_modules', 'modules with network']];

const words = (list) => h('p', { class: 'mono' }, (list || []).join(' ') || 'none');

function langSection(doc, runtime, policyName) {
  if (!doc) return h('p', {}, 'not configured');
  if (doc.enabled === false) return h('p', { class: 'err' }, 'disabled by this policy');
  const imp = doc.imports || {};
  const parts = [h('h4', {}, `imports: ${imp.mode === 'deny' ? 'every module except' : 'only'}`), words(imp.modules)];
  for (const [k, label] of LISTS) if (doc[k] && doc[k].length) parts.push(h('h4', {}, label), words(doc[k]));
  if (doc.runtime) {
    parts.push(h('h4', {}, 'run-time rules'), h('ul', {}, Object.entries(doc.runtime).map(([k, v]) =>
      h('li', {}, `${k}: ${Array.isArray(v) ? v.join(', ') : JSON.stringify(v)}`))));
  }
  const rp = runtime && runtime.policies && runtime.policies[policyName];
  if (runtime && runtime.available && rp) {
    const pkgs = new Set((runtime.packages || []).flatMap((x) => x.modules || []));
    const allowed = (rp.importable || []).filter((m) => pkgs.has(m));
    parts.push(h('h4', {}, 'packages a job may import'), words(allowed));
  } else {
    parts.push(h('p', { class: 'muted' }, 'packages: the executor is not reachable'));
  }
  return parts;
}

export async function policies(root) {
  clear(root).append(h('h1', {}, 'Policies'));
  const [p, rt] = await Promise.all([
    api('GET', '/v1/policies'),
    api('GET', '/v1/runtimes').catch(() => ({ runtimes: {} })),
  ]);
  for (const pol of p.policies.filter((x) => x.allowed)) {
    const one = await api('GET', `/v1/policies/${encodeURIComponent(pol.name)}`);
    const doc = one.document || {};
    root.append(h('section', { class: 'policy', 'data-testid': `policy-${pol.name}` },
      h('h2', {}, pol.name, pol.default ? ' (default)' : ''),
      h('p', {}, pol.description),
      doc.extends ? h('p', {}, `extends ${[].concat(doc.extends).join(', ')}`) : null,
      h('p', { class: 'mono muted' }, `sha256 ${pol.sha256}`),
      LANGS.map(([key, rtKey, label]) => h('details', { open: key === 'python' },
        h('summary', {}, label), langSection(doc[key], (rt.runtimes || {})[rtKey], pol.name)))));
  }
}
