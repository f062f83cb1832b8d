// console_browser.mjs SCENARIO - one scenario of the console's browser tests
// (test_console_e2e.py runs it): Debian's Chromium, headless, driven by
// playwright-core (console/package-lock.json). Environment: SG_URL (the
// gateway), SG_TOKEN, SG_SHOT (the screenshot to save), SG_USER_DATA (a
// fresh profile directory) and what the scenario needs. Prints one JSON line
// of what it saw; exits 1 with the reason when a check fails.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { chromium } = createRequire(join(root, 'console', 'package.json'))('playwright-core');
const env = process.env;
const url = env.SG_URL.replace(/\/$/, '');
const TIMEOUT = 30000;

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

const signedIn = async (page, token = env.SG_TOKEN) => {
  await page.addInitScript((t) => sessionStorage.setItem('sandgate.token', t), token);
};

async function setCode(page, code) {
  await page.click('.cm-content');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(code);
}

async function run(page) {
  await page.click('[data-testid=run]');
}

const scenarios = {
  async signin(page) {
    await page.goto(`${url}/console/`);
    await page.fill('[data-testid=token]', 'not-a-valid-token-0123456789');
    await page.click('[data-testid=signin]');
    await page.waitForSelector('[data-testid=signin-error]:has-text("not valid")');
    await page.fill('[data-testid=token]', env.SG_TOKEN);
    await page.click('[data-testid=signin]');
    const who = await page.textContent('[data-testid=whoami]');
    check(who.includes(env.SG_TENANT), `whoami shows ${env.SG_TENANT}: ${who}`);
    const stored = await page.evaluate(() => ({ url: location.href, cookie: document.cookie }));
    check(!stored.url.includes(env.SG_TOKEN) && !stored.cookie.includes(env.SG_TOKEN), 'token not in URL or cookie');
    await page.waitForSelector('.cm-content');
    return { who };
  },

  async stream(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/playground`);
    await setCode(page, "import time\n\ndef main():\n    print('first', flush=True)\n    time.sleep(4)\n    print('second')\n    return 7\n");
    await page.waitForSelector('[data-testid=verdict].accept');
    await run(page);
    await page.waitForFunction(() => document.querySelector('[data-testid=stdout]').textContent.includes('first'), null, { timeout: TIMEOUT });
    const during = await page.evaluate(() => ({
      stdout: document.querySelector('[data-testid=stdout]').textContent,
      status: document.querySelector('[data-testid=status]').textContent,
    }));
    check(during.status === 'running' && !during.stdout.includes('second'), `first line before the end: ${JSON.stringify(during)}`);
    await page.waitForSelector('[data-testid=status]:has-text("success")', { timeout: TIMEOUT });
    const after = await page.textContent('[data-testid=stdout]');
    check(after === 'first\nsecond\n', `whole stdout: ${JSON.stringify(after)}`);
    return { during, after };
  },

  async cancel(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/playground`);
    await setCode(page, "import time\n\ndef main():\n    print('started', flush=True)\n    time.sleep(30)\n    return 1\n");
    await page.waitForSelector('[data-testid=verdict].accept');
    const t0 = Date.now();
    await run(page);
    await page.waitForFunction(() => document.querySelector('[data-testid=stdout]').textContent.includes('started'), null, { timeout: TIMEOUT });
    await page.click('[data-testid=cancel]');
    await page.waitForSelector('[data-testid=status]:has-text("cancelled")', { timeout: TIMEOUT });
    const seconds = (Date.now() - t0) / 1000;
    check(seconds < 25, `cancelled long before the job's 30 s: ${seconds}`);
    return { seconds };
  },

  async marker(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/playground`);
    await setCode(page, 'import os\n\ndef main():\n    return os.getcwd()\n');
    // the marker of this text's analysis (debounced): under "os" on line 1
    await page.waitForFunction(() => [...document.querySelectorAll('.cm-line')][0]
      ?.querySelector('.cm-lintRange-error')?.textContent === 'os', null, { timeout: TIMEOUT });
    const line = await page.evaluate(() => {
      const m = document.querySelector('.cm-lintRange-error');
      const lines = [...document.querySelectorAll('.cm-line')];
      return { text: m.textContent, line: lines.findIndex((l) => l.contains(m)) + 1,
        gutter: document.querySelectorAll('.cm-lint-marker-error').length };
    });
    check(line.line === 1 && line.text === 'os' && line.gutter === 1, `marker on line 1 under "os": ${JSON.stringify(line)}`);
    await page.hover('.cm-lintRange-error');
    const tip = await page.waitForSelector('.cm-tooltip-lint', { timeout: TIMEOUT });
    const message = await tip.textContent();
    check(message.includes('import.not-allowed'), `the rule in the marker's message: ${message}`);
    const verdict = await page.textContent('[data-testid=verdict]');
    check(verdict.startsWith('rejected'), `verdict: ${verdict}`);
    return { line, message, verdict };
  },

  async xss(page) {
    let dialogs = 0;
    page.on('dialog', (d) => { dialogs++; d.dismiss(); });
    await signedIn(page);
    await page.goto(`${url}/console/#/playground`);
    const payload = '<img src=x onerror=alert(1)><script>alert(2)</script>';
    await setCode(page, `def main():\n    print(${JSON.stringify(payload)})\n    return ${JSON.stringify(payload)}\n`);
    await page.waitForSelector('[data-testid=verdict].accept');
    await run(page);
    await page.waitForSelector('[data-testid=status]:has-text("success")', { timeout: TIMEOUT });
    const seen = await page.evaluate(() => ({
      stdout: document.querySelector('[data-testid=stdout]').textContent,
      imgs: document.querySelectorAll('main img').length,
      scripts: document.querySelectorAll('main script').length,
      result: document.querySelector('[data-testid=result]').textContent,
    }));
    check(seen.stdout === `${payload}\n`, `stdout shown as text: ${JSON.stringify(seen.stdout)}`);
    check(seen.imgs === 0 && seen.scripts === 0 && dialogs === 0, `no element made from output: ${JSON.stringify(seen)}`);
    check(seen.result.includes(payload), 'the result shown as text');
    return seen;
  },

  async audit(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/audit`);
    await page.fill('[data-testid=filter-rule]', 'import.not-allowed');
    await page.click('[data-testid=apply]');
    await page.waitForFunction((id) => [...document.querySelectorAll('[data-testid=audit-table] tbody tr')]
      .some((r) => r.textContent.includes(id)), env.SG_JOB, { timeout: TIMEOUT });
    const rows = await page.$$eval('[data-testid=audit-table] tbody tr', (rs) => rs.map((r) => r.textContent));
    check(rows.length > 0 && rows.every((r) => r.includes('import.not-allowed')), `every row has the rule: ${rows}`);
    await page.click(`a[href="#/audit/${env.SG_JOB}"]`);
    await page.waitForSelector('[data-testid=job-code] .violation', { timeout: TIMEOUT });
    const job = await page.evaluate(() => ({
      underlined: [...document.querySelectorAll('[data-testid=job-code] .violation')].map((s) => s.textContent),
      why: [...document.querySelectorAll('[data-testid=violation-message]')].map((s) => s.textContent),
      fields: document.querySelector('[data-testid=job-fields]').textContent,
    }));
    check(job.underlined[0] === 'os' && job.why[0].startsWith('import.not-allowed'), `underlined: ${JSON.stringify(job)}`);
    check(job.fields.includes('reject'), 'verdict shown');
    return { rows: rows.length, job };
  },

  async isolation(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/audit`);
    await page.waitForSelector('[data-testid=audit-table]');
    await page.waitForFunction(() => document.querySelector('[data-testid=audit-note]').textContent !== ''
      || document.querySelectorAll('[data-testid=audit-table] tbody tr').length > 0);
    const table = await page.textContent('[data-testid=audit-table]');
    for (const id of env.SG_OTHER_JOBS.split(',')) check(!table.includes(id), `another tenant's job ${id} listed`);
    await page.goto(`${url}/console/#/audit/${env.SG_OTHER_JOBS.split(',')[0]}`);
    const err = await (await page.waitForSelector('[data-testid=job-error]', { timeout: TIMEOUT })).textContent();
    check(err.includes('not_found'), `another tenant's job page: ${err}`);
    return { err };
  },

  async policies(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/policies`);
    const sec = await page.waitForSelector('[data-testid=policy-default]', { timeout: TIMEOUT });
    await page.waitForFunction(() => document.querySelector('[data-testid=policy-default]').textContent.includes('packages a job may import'), null, { timeout: TIMEOUT });
    const text = await sec.textContent();
    check(text.includes('imports: only') && text.includes('run-time rules') && text.includes('forbidden names'), `policy shown: ${text.slice(0, 300)}`);
    return { chars: text.length };
  },

  async overview(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/overview`);
    await page.waitForFunction(() => [...document.querySelectorAll('svg[aria-label="requests per minute by outcome"] rect')]
      .some((r) => Number(r.getAttribute('height')) > 0), null, { timeout: TIMEOUT });
    const seen = await page.evaluate(() => ({
      ready: document.querySelector('[data-testid=ready]').textContent,
      bars: [...document.querySelectorAll('svg[aria-label="requests per minute by outcome"] rect')].filter((r) => Number(r.getAttribute('height')) > 0).length,
      executors: document.querySelectorAll('[data-testid=executors] tbody tr').length,
      pools: [...document.querySelectorAll('[data-testid=pools] tbody tr')].map((tr) => Object.fromEntries(
        [...tr.cells].map((c, i) => [document.querySelectorAll('[data-testid=pools] th')[i].textContent, c.textContent]))),
      inFlight: document.querySelector('[data-testid=in-flight]')?.textContent,
      errors: [...document.querySelectorAll('.err')].map((e) => e.textContent),
    }));
    check(seen.bars > 0 && seen.executors === 2 && seen.pools.length > 0, `overview: ${JSON.stringify(seen)}`);
    return seen;
  },

  async session(page) {
    await signedIn(page);
    await page.goto(`${url}/console/#/playground`);
    await page.check('[data-testid=session-mode]');
    await setCode(page, 'x = 41\nprint(x)\n');
    await page.waitForSelector('[data-testid=verdict].accept');
    await run(page);
    await page.waitForSelector('[data-testid=status]:has-text("success")', { timeout: 60000 });
    const first = await page.textContent('[data-testid=stdout]');
    await setCode(page, 'print(x + 1)\n');
    await page.waitForSelector('[data-testid=verdict].accept');
    await run(page);
    await page.waitForFunction(() => document.querySelector('[data-testid=stdout]').textContent === '42\n', null, { timeout: 60000 });
    const session = await page.textContent('[data-testid=session]');
    check(first === '41\n' && session.startsWith('session '), `cells: ${first} ${session}`);
    return { first, second: '42\n', session };
  },
};

const name = process.argv[2];
if (!scenarios[name]) {
  console.error(`unknown scenario ${name}`);
  process.exit(2);
}
// A fresh profile (--user-data-dir) per run: playwright passes it itself.
const context = await chromium.launchPersistentContext(env.SG_USER_DATA, {
  executablePath: env.SG_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 860 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let code = 0;
const page = context.pages()[0] || await context.newPage();
const problems = [];
await page.addInitScript(() => document.addEventListener('securitypolicyviolation', (e) =>
  console.error(`CSP ${e.violatedDirective} ${e.sourceFile}:${e.lineNumber} ${e.sample}`)));
page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
page.on('pageerror', (e) => problems.push(String(e)));
page.setDefaultTimeout(TIMEOUT);
try {
  const seen = await scenarios[name](page);
  check(!problems.some((p) => /Content Security Policy|Refused/.test(p)), `CSP violations: ${problems}`);
  console.log(JSON.stringify({ scenario: name, seen, console_errors: problems }));
} catch (e) {
  console.error(`${name}: ${e.message}\nconsole errors: ${problems.join(' | ')}`);
  code = 1;
} finally {
  if (env.SG_SHOT) await page.screenshot({ path: env.SG_SHOT, fullPage: true }).catch(() => {});
  await context.close();
}
process.exit(code);
