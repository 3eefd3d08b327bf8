// End to end through the real services and the real participant form.
//
//   node e2e-services/run.mjs --mode basic|shares --out DIR [--participants N] [--cohort-size M]
//
// Starts `orthomask serve all` on loopback (its own data directory), creates a survey through the
// admin API, and lets N headless Chromium participants (Debian's chromium through playwright-core)
// fill in the web app's participant form (#/participate?survey=…) with generated answers, which
// only this script knows. Then it closes the survey, downloads release.csv and manifest.json,
// checks every receipt against the published receipt lists, and compares
// `orthomask regress --json` on the release with the same regression on the raw answers: every
// coefficient, standard error, R², σ and F to 1e-9 relative. DIR receives raw.csv, release.csv,
// manifest.json and the database files of the collector and the provider (and, in share mode,
// of the right-masking services). Exits non-zero on any failure; stops the services it started.
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, writeFile, copyFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  repo, cli, parseArgs, mulberry32, requireBuilt, waitFor, startServices, api, launchChromium, agree, run,
} from './lib.mjs';

const args = parseArgs(process.argv.slice(2));
const mode = args.mode ?? 'basic';
if (!['basic', 'shares'].includes(mode)) throw new Error(`--mode must be basic or shares, not ${mode}`);
const out = resolve(args.out ?? join(repo, 'target', 'e2e-services', mode));
const participants = Number(args.participants ?? 20);
const cohortSize = Number(args['cohort-size'] ?? 10);
const concurrency = Number(args.concurrency ?? 4);
const log = (m) => console.log(`[e2e ${mode}] ${m}`);

// ── generated answers, known only to this script ──────────────────────────────────────────────
function answersOf(i) {
  const u = mulberry32(7919 * (i + 1) + (mode === 'shares' ? 17 : 0));
  // Full-precision numbers: none can hide among round values in a store or a request.
  const smoker = u() < 0.3;
  const age = 18 + Math.floor(u() * 72);
  const income = 10 + u() * 200 + u() * 1e-6;
  const noise = 8 * (u() - 0.5);
  const score = Math.min(100, Math.max(0, 20 + 0.4 * age + 0.12 * income - 6 * (smoker ? 1 : 0) + noise));
  return { smoker, age, income, score };
}
const DRAFT = (id) => ({
  id,
  title: 'Health and income (end-to-end test)',
  description: 'Generated answers typed by a headless browser.',
  consent: 'This is an automated test. Your answers are masked on this device before anything is sent.',
  questions: [
    { id: 'smoker', label: 'Do you smoke?', kind: 'yes_no' },
    { id: 'age', label: 'Your age in years', kind: 'integer', min: 18, max: 90 },
    { id: 'income', label: 'Your monthly income (hundreds)', kind: 'number', min: 0, max: 250 },
    { id: 'score', label: 'Your wellbeing score', kind: 'number', min: 0, max: 100 },
  ],
  cohort_size: cohortSize,
  share_mode: mode === 'shares',
  // The basic protocol is never open to anyone (its definition carries the device key): each
  // participant gets an invitation. Share mode may be open.
  invitations: mode === 'basic',
});

// ── one participant in the real form ──────────────────────────────────────────────────────────
async function participate(browser, participantUrl, a) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  await page.addInitScript(() => document.addEventListener('securitypolicyviolation',
    (e) => console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI}`)));
  try {
    await page.goto(participantUrl);
    await page.getByLabel('I have read this and agree to take part.').check({ timeout: 60000 });
    await page.getByRole('button', { name: 'Start the survey' }).click();
    const next = () => page.getByRole('button', { name: /^(Next|Review)$/ }).click();
    await page.getByRole('radio', { name: a.smoker ? 'Yes' : 'No', exact: true }).check();
    await next();
    for (const value of [a.age, a.income, a.score]) {
      await page.locator('input[type=number]').fill(String(value));
      await next();
    }
    await page.getByRole('region', { name: 'What leaves your device' }).waitFor();
    await page.getByRole('button', { name: 'Send' }).click();
    const hash = await page.getByTestId('receipt-hash').first().textContent({ timeout: 120000 });
    const hashes = await page.getByTestId('receipt-hash').allTextContents();
    // Each receipt links to the list its own service publishes when the cohort closes.
    const lists = await page.getByTestId('receipt-list').evaluateAll((links) => links.map((a) => a.href));
    if (problems.length) throw new Error(problems.join('; '));
    return { hash, hashes, lists };
  } catch (e) {
    throw new Error(`${e.message}${problems.length ? ` (${problems.join('; ')})` : ''}`);
  } finally {
    await context.close();
  }
}

// ── checks ────────────────────────────────────────────────────────────────────────────────────
function regress(csv) {
  return JSON.parse(execFileSync(cli, ['regress', '--input', csv, '--y', 'score', '--x', 'smoker,age,income', '--json'], { encoding: 'utf8' }));
}
async function main() {
  await requireBuilt();
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const data = await mkdtemp(join(tmpdir(), `orthomask-e2e-${mode}-`));
  const services = await startServices(data);
  let browser;
  try {
    log(`collector ${services.collector}, provider ${services.msp}, right-masking ${services.rights.join(' ')}`);
    const id = `e2e-${mode}`;
    const created = await api('POST', `${services.collector}/api/admin/surveys`, DRAFT(id), services.admin);
    if (created.status !== 201) throw new Error(`creating the survey: ${created.status} ${created.text}`);
    log(`survey ${id}: p1 = ${created.json.p1}, p2 = ${created.json.p2}, sigma = ${created.json.sigma.toFixed(2)}, cohorts of ${cohortSize}`);
    // One link per participant: an invitation each in the basic protocol, the open link in share
    // mode. Either way the page loads the signed definition from its own origin.
    let participantUrls;
    if (mode === 'basic') {
      const inv = await api('POST', `${services.collector}/api/admin/surveys/${id}/invitations`, { count: participants }, services.admin);
      if (inv.status !== 201) throw new Error(`invitations: ${inv.status} ${inv.text}`);
      participantUrls = inv.json.invitations.map((x) => x.participant_url);
    } else {
      participantUrls = Array.from({ length: participants }, () => created.json.participant_url);
    }

    const answers = Array.from({ length: participants }, (_, i) => answersOf(i));
    const rows = answers.map((a) => [a.smoker ? 1 : 0, a.age, a.income, a.score].map(String).join(','));
    await writeFile(join(out, 'raw.csv'), `smoker,age,income,score\n${rows.join('\n')}\n`);

    browser = await launchChromium();
    const receipts = [];
    const started = Date.now();
    for (let i = 0; i < participants; i += concurrency) {
      const batch = answers.slice(i, i + concurrency).map((a, j) => participate(browser, participantUrls[i + j], a));
      receipts.push(...(await Promise.all(batch)));
      log(`${receipts.length}/${participants} participants sent their masked answers`);
    }
    log(`all participants done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const expectedPerParticipant = mode === 'shares' ? services.rights.length : 1;
    for (const r of receipts) {
      if (r.hashes.length !== expectedPerParticipant) throw new Error(`a participant got ${r.hashes.length} receipts, expected ${expectedPerParticipant}`);
    }

    const closed = await api('POST', `${services.collector}/api/admin/surveys/${id}/close`, {}, services.admin);
    if (closed.status !== 200) throw new Error(`closing: ${closed.status} ${closed.text}`);
    const release = await waitFor(async () => {
      const r = await api('GET', `${services.collector}/api/surveys/${id}/release.csv`);
      if (r.status === 200) return r.text;
      // A real survey's status is the survey team's (issue 20 §7): with the admin token.
      const s = await api('GET', `${services.collector}/api/surveys/${id}/status`, undefined, services.admin);
      if (s.json?.status === 'failed') throw new Error(`the survey failed: ${s.text}`);
      return null;
    }, 'the release');
    const manifest = await api('GET', `${services.collector}/api/surveys/${id}/manifest.json`);
    await writeFile(join(out, 'release.csv'), release);
    await writeFile(join(out, 'manifest.json'), manifest.text);
    const m = manifest.json;
    log(`released n = ${m.n} in cohorts ${JSON.stringify(m.cohorts.sizes)}, QA ${m.qa.passed ? 'passed' : 'FAILED'}`);
    if (m.n !== participants) throw new Error(`the release has ${m.n} records, ${participants} participants answered`);
    if (!m.qa.passed) throw new Error('the QA check failed');

    // Every receipt is in the published list of its cohort, at every service that issued one.
    const status = await api('GET', `${services.collector}/api/surveys/${id}/status`, undefined, services.admin);
    if (status.status !== 200) throw new Error(`status: ${status.status} ${status.text}`);
    // Without the token a real survey's status is not public, and not even its existence is
    // told: the answer is the one for a survey that does not exist (issue 43 §6).
    const anonymous = await api('GET', `${services.collector}/api/surveys/${id}/status`);
    const none = await api('GET', `${services.collector}/api/surveys/no-such-survey/status`);
    const same = anonymous.status === 404 && none.status === 404
      && anonymous.json?.error === none.json?.error.replace('no-such-survey', id);
    if (!same) throw new Error(`an anonymous status request answered ${anonymous.status}: ${anonymous.text}; for no survey: ${none.status} ${none.text}`);
    const bases = mode === 'shares' ? services.rights : [services.msp];
    const published = new Set();
    for (const c of status.json.cohorts.filter((c) => c.status === 'received')) {
      for (const base of bases) {
        const list = await api('GET', `${base}/api/surveys/${id}/cohorts/${c.cohort}/receipts`);
        if (list.status !== 200) throw new Error(`receipts of cohort ${c.cohort}: ${list.text}`);
        list.json.upload_hashes.forEach((h) => published.add(h));
      }
    }
    const missing = receipts.flatMap((r) => r.hashes).filter((h) => !published.has(h));
    if (missing.length) throw new Error(`${missing.length} receipts are not in the published lists`);
    // The receipt screen's links lead to those lists: every receipt is in the list it links to.
    for (const r of receipts) {
      if (r.lists.length !== r.hashes.length) throw new Error(`${r.hashes.length} receipts but ${r.lists.length} list links`);
      for (const [k, href] of r.lists.entries()) {
        const list = await api('GET', href);
        if (list.status !== 200 || !list.json.upload_hashes.includes(r.hashes[k])) {
          throw new Error(`receipt ${r.hashes[k]} is not in the list its screen links to (${href})`);
        }
      }
    }
    log(`all ${receipts.flatMap((r) => r.hashes).length} receipts are in the published receipt lists`);

    // The regression on the release equals the regression on the raw answers.
    const raw = regress(join(out, 'raw.csv'));
    const rel = regress(join(out, 'release.csv'));
    let worst = 0;
    raw.coefficients.forEach((c, k) => {
      const r = rel.coefficients[k];
      if (c.name !== r.name) throw new Error(`coefficient ${k}: ${c.name} vs ${r.name}`);
      worst = Math.max(worst, agree(c.estimate, r.estimate, `${c.name} estimate, raw vs release`), agree(c.std_error, r.std_error, `${c.name} standard error, raw vs release`));
    });
    for (const key of ['r_squared', 'sigma', 'f_statistic']) worst = Math.max(worst, agree(raw[key], rel[key], `${key}, raw vs release`));
    log(`regression score ~ smoker + age + income: release equals raw answers (largest relative difference ${worst.toExponential(2)})`);
    for (const c of rel.coefficients) log(`  ${c.name.padEnd(12)} ${c.estimate.toPrecision(10).padStart(16)}  (se ${c.std_error.toPrecision(6)})`);
  } finally {
    if (browser) await browser.close();
    await services.stop();
  }
  // The stores, closed cleanly by the services' shutdown.
  await copyFile(join(data, 'collector', 'collector.sqlite3'), join(out, 'collector.sqlite3'));
  await copyFile(join(data, 'msp', 'msp.sqlite3'), join(out, 'msp.sqlite3'));
  // Every right-masking service `serve all` started (three by default).
  const rights = mode === 'shares' ? services.rights.map((_, i) => `right-${i}.sqlite3`) : [];
  for (const [i, file] of rights.entries()) await copyFile(join(data, `right-${i}`, 'right.sqlite3'), join(out, file));
  await rm(data, { recursive: true, force: true });
  // No generated answer in any store: neither as a double (either byte order) nor as text.
  const stores = ['collector.sqlite3', 'msp.sqlite3', ...rights];
  const secrets = Array.from({ length: participants }, (_, i) => answersOf(i)).flatMap((a) => [a.income, a.score]);
  for (const file of stores) {
    const bytes = await readFile(join(out, file));
    for (const v of secrets) {
      const le = Buffer.alloc(8); le.writeDoubleLE(v);
      const be = Buffer.alloc(8); be.writeDoubleBE(v);
      for (const needle of [le, be, Buffer.from(String(v)), Buffer.from(v.toFixed(6))]) {
        if (bytes.indexOf(needle) !== -1) throw new Error(`${file} holds the raw answer ${v}`);
      }
    }
  }
  log(`no raw answer in ${stores.join(', ')}`);
  log(`passed; files in ${out}`);
}

run(mode, main);
