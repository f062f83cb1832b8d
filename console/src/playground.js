// playground.js - try code against a policy: live check, Run (streamed),
// Cancel, artifacts, and Session mode (variables kept between cells).
import { h, clear, select, fmtMs } from './dom.js';
import { api, stream } from './api.js';
import { createEditor } from './editor.js';

const SAMPLES = {
  python: "import json\n\ndef main():\n    print('hello from the sandbox')\n    return {'ok': True}\n",
  nodejs: "function main(args) {\n  console.log('hello from the sandbox');\n  return { ok: true };\n}\nmodule.exports = { main };\n",
};
const SESSION_SAMPLE = { python: 'x = 41\nprint(x)\n', nodejs: 'let x = 41;\nconsole.log(x);\n' };

function artifactView(a) {
  const label = `${a.name} (${a.mime_type || 'file'}, ${a.size} bytes)`;
  if (/^image\/(png|jpeg|gif|svg\+xml)$/.test(a.mime_type || '') && a.content_b64) {
    return h('figure', { class: 'artifact' },
      h('img', { src: `data:${a.mime_type};base64,${a.content_b64}`, alt: a.name }),
      h('figcaption', {}, label));
  }
  return h('div', { class: 'artifact' }, label);
}

export async function playground(root) {
  const state = { language: 'python', policy: '', running: null, jobId: null, session: null };
  const policies = await api('GET', '/v1/policies').catch(() => ({ policies: [], default: '' }));
  const usable = policies.policies.filter((p) => p.allowed).map((p) => p.name);
  state.policy = policies.default;
  const verdict = h('span', { class: 'verdict', 'data-testid': 'verdict' }, '');
  const stdout = h('pre', { class: 'out', 'data-testid': 'stdout' });
  const stderr = h('pre', { class: 'out err', 'data-testid': 'stderr' });
  const result = h('div', { class: 'result', 'data-testid': 'result' });
  const status = h('span', { class: 'status', 'data-testid': 'status' });
  const sessionInfo = h('span', { class: 'muted', 'data-testid': 'session' });
  const editorBox = h('div', { class: 'editor' });

  const analyze = async (code, language) => {
    try {
      const body = { language, code };
      if (state.policy) body.policy = state.policy;
      const a = await api('POST', '/v1/analyze', body);
      verdict.textContent = a.verdict === 'accept' ? `accepted by ${a.policy.name}`
        : `rejected by ${a.policy.name}: ${a.violations.length} violation(s)`;
      verdict.className = `verdict ${a.verdict}`;
      return a.violations;
    } catch (e) {
      verdict.textContent = `check failed: ${e.message}`;
      verdict.className = 'verdict error';
      return null;
    }
  };
  const editor = createEditor(editorBox, { doc: SAMPLES.python, language: 'python', analyze });

  const langSel = select({ 'data-testid': 'language', onchange: (e) => {
    state.language = e.target.value;
    editor.setCode((state.session ? SESSION_SAMPLE : SAMPLES)[state.language]);
    editor.setLanguage(state.language);
    endSession();
  } }, [['python', 'Python'], ['nodejs', 'JavaScript']], 'python');
  const polSel = select({ 'data-testid': 'policy', onchange: (e) => { state.policy = e.target.value; editor.recheck(); endSession(); } },
    usable, state.policy);
  const sessionBox = h('input', { type: 'checkbox', 'data-testid': 'session-mode', onchange: (e) => toggleSession(e.target.checked) });
  const runBtn = h('button', { class: 'primary', 'data-testid': 'run', onclick: () => run() }, 'Run');
  const cancelBtn = h('button', { 'data-testid': 'cancel', disabled: true, onclick: () => cancel() }, 'Cancel');

  function showResult(r) {
    clear(result);
    if (r.error) {
      status.textContent = r.error.code;
      result.append(h('p', { class: 'err' }, `${r.error.code}: ${r.error.message}`));
      return;
    }
    status.textContent = r.status;
    status.className = `status ${r.status}`;
    stdout.textContent = r.stdout || '';
    stderr.textContent = r.stderr || '';
    const rows = [['status', r.status], ['exit code', r.exit_code], ['detail', r.detail]];
    if (r.result && r.result.present) rows.push(['result', JSON.stringify(r.result.value)]);
    if (r.timings) rows.push(['time', `${fmtMs(r.timings.total_ms)} (analysis ${fmtMs(r.timings.analysis_ms)}, run ${fmtMs(r.timings.exec_ms)})`]);
    if (r.job_id) rows.push(['job', r.job_id]);
    for (const v of r.violations || []) rows.push(['violation', `line ${v.line}:${v.column} ${v.rule}: ${v.message}`]);
    result.append(h('dl', {}, rows.filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])));
    const arts = r.artifacts || [];
    if (arts.length) result.append(h('div', { class: 'artifacts', 'data-testid': 'artifacts' }, arts.map(artifactView)));
  }

  async function ensureSession() {
    if (state.session) return state.session;
    const body = { language: state.language };
    if (state.policy) body.policy = state.policy;
    const s = await api('POST', '/v1/sessions', body);
    state.session = s.session_id;
    sessionInfo.textContent = `session ${s.session_id}`;
    return state.session;
  }

  function endSession() {
    const id = state.session;
    state.session = null;
    sessionInfo.textContent = sessionBox.checked ? 'a new session starts with the next cell' : '';
    if (id) api('DELETE', `/v1/sessions/${encodeURIComponent(id)}`).catch(() => {});
  }

  function toggleSession(on) {
    if (!on) endSession();
    else sessionInfo.textContent = 'a new session starts with the next cell';
    if (on && editor.code === SAMPLES[state.language]) editor.setCode(SESSION_SAMPLE[state.language]);
  }

  async function run() {
    if (state.running) return;
    stdout.textContent = '';
    stderr.textContent = '';
    clear(result);
    status.textContent = 'running';
    status.className = 'status running';
    const ctl = new AbortController();
    state.running = ctl;
    runBtn.disabled = true;
    cancelBtn.disabled = false;
    const onEvent = (name, data) => {
      if (name === 'stdout') stdout.append(document.createTextNode(data.text));
      else if (name === 'stderr') stderr.append(document.createTextNode(data.text));
      else if (name === 'result') showResult(data);
    };
    try {
      if (sessionBox.checked) {
        const id = await ensureSession();
        await stream(`/v1/sessions/${encodeURIComponent(id)}/exec`, { code: editor.code }, onEvent, null, ctl.signal);
      } else {
        const body = { language: state.language, code: editor.code };
        if (state.policy) body.policy = state.policy;
        await stream('/v1/run', body, onEvent, (id) => { state.jobId = id; }, ctl.signal);
      }
    } catch (e) {
      if (e.name !== 'AbortError') showResult({ error: { code: e.code || 'failed', message: e.message } });
      if (e.code === 'session_not_found' || e.code === 'session_lost') endSession();
    } finally {
      state.running = null;
      state.jobId = null;
      runBtn.disabled = false;
      cancelBtn.disabled = true;
    }
  }

  async function cancel() {
    try {
      if (state.session) await api('POST', `/v1/sessions/${encodeURIComponent(state.session)}/cancel`);
      else if (state.jobId) await api('POST', `/v1/jobs/${encodeURIComponent(state.jobId)}/cancel`);
      else if (state.running) state.running.abort();
    } catch (e) {
      status.textContent = `cancel: ${e.message}`;
    }
  }

  clear(root).append(
    h('h1', {}, 'Playground'),
    h('div', { class: 'toolbar' },
      h('label', {}, 'Language ', langSel), h('label', {}, 'Policy ', polSel),
      h('label', {}, sessionBox, ' Session mode'), runBtn, cancelBtn, verdict),
    editorBox,
    h('div', { class: 'toolbar' }, h('strong', {}, 'Outcome: '), status, sessionInfo),
    h('div', { class: 'panes' },
      h('section', {}, h('h2', {}, 'stdout'), stdout),
      h('section', {}, h('h2', {}, 'stderr'), stderr)),
    result,
  );
  return () => endSession();
}
