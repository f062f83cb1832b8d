// main.js - the console's shell: sign in with a token, the navigation, and
// a hash router (#/playground, #/audit?..., #/audit/{request_id},
// #/policies, #/overview).
import { h, clear } from './dom.js';
import { api, token } from './api.js';
import { playground } from './playground.js';
import { auditList, auditJob } from './audit.js';
import { policies } from './policies.js';
import { overview } from './overview.js';

const app = document.getElementById('app');
let leave = null;

function signIn(message) {
  token.clear();
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', 'data-testid': 'token', placeholder: 'API token' });
  const note = h('p', { class: 'err', 'data-testid': 'signin-error' }, message || '');
  const form = h('form', { class: 'signin', onsubmit: async (e) => {
    e.preventDefault();
    token.set(input.value.trim());
    try {
      await api('GET', '/v1/whoami');
      if (!location.hash || location.hash === '#/') location.hash = '#/playground';
      render();
    } catch (err) {
      signIn(err.status === 401 ? 'That token is not valid.' : err.message);
    }
  } },
  h('h1', {}, 'sandgate console'),
  h('p', {}, 'Sign in with an API token. It stays in this tab (session storage) and is sent only to this gateway.'),
  input, h('button', { type: 'submit', class: 'primary', 'data-testid': 'signin' }, 'Sign in'), note);
  clear(app).append(form);
  input.focus();
}

function nav(who) {
  const link = (href, label) => h('a', { href, class: location.hash.startsWith(href) ? 'active' : '' }, label);
  return h('nav', {},
    h('span', { class: 'brand' }, 'sandgate'),
    link('#/playground', 'Playground'), link('#/audit', 'Audit'), link('#/policies', 'Policies'),
    link('#/overview', 'Overview'),
    h('span', { class: 'who', 'data-testid': 'whoami' }, who),
    h('button', { onclick: () => { token.clear(); location.hash = '#/'; signIn(); } }, 'Sign out'));
}

async function render() {
  if (leave) { leave(); leave = null; }
  if (!token.get()) return signIn();
  let me;
  try {
    me = await api('GET', '/v1/whoami');
  } catch (err) {
    return signIn(err.status === 401 ? 'Sign in again.' : err.message);
  }
  const tenant = me.tenant && me.tenant.name ? me.tenant.name : 'anonymous';
  const main = h('main', {});
  clear(app).append(nav(`tenant ${tenant}`), main);
  const [path, qs] = (location.hash.slice(1) || '/playground').split('?');
  const params = new URLSearchParams(qs || '');
  try {
    if (path.startsWith('/audit/')) await auditJob(main, decodeURIComponent(path.slice(7)));
    else if (path === '/audit') await auditList(main, params);
    else if (path === '/policies') await policies(main);
    else if (path === '/overview') leave = await overview(main);
    else leave = await playground(main);
  } catch (err) {
    main.append(h('p', { class: 'err' }, err.message));
  }
}

window.addEventListener('hashchange', render);
render();
