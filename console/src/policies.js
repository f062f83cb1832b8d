// policies.js - the policies this token may use and what each lets a job
// import per language (GET /v1/policies, GET /v1/runtimes).
import { h, clear } from './dom.js';
import { api } from './api.js';

export async function policies(root) {
  clear(root).append(h('h1', {}, 'Policies'));
  const [p, rt] = await Promise.all([
    api('GET', '/v1/policies'),
    api('GET', '/v1/runtimes').catch(() => ({ runtimes: {} })),
  ]);
  for (const pol of p.policies.filter((x) => x.allowed)) {
    const langs = Object.entries(rt.runtimes || {}).map(([lang, r]) => {
      const pr = (r.policies || {})[pol.name];
      if (!r.available) return h('li', {}, `${lang}: executor unavailable`);
      if (!pr) return h('li', {}, `${lang}: no listing`);
      if (!pr.enabled) return h('li', {}, `${lang}: disabled by this policy`);
      const pkgs = new Set((r.packages || []).flatMap((x) => x.modules || []));
      const imp = pr.importable || [];
      return h('li', {}, h('strong', {}, lang), ` (${r.interpreter ? `${r.interpreter.name} ${r.interpreter.version}` : ''}): `,
        `${imp.length} importable modules; packages: ${imp.filter((m) => pkgs.has(m)).join(', ') || 'none'}`,
        h('details', {}, h('summary', {}, 'all importable modules'), h('p', { class: 'mono' }, imp.join(' '))));
    });
    root.append(h('section', { class: 'policy', 'data-testid': `policy-${pol.name}` },
      h('h2', {}, pol.name, pol.default ? ' (default)' : ''),
      h('p', {}, pol.description), h('p', { class: 'mono muted' }, `sha256 ${pol.sha256}`),
      h('ul', {}, langs)));
  }
}
