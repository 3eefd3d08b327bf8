// The demonstration loop on the running product, as a newcomer meets it (issue 12 §1).
//
//   node e2e-services/newcomer.mjs --out DIR
//
// Starts `orthomask serve all` on loopback exactly as scripts/run.sh does (demonstrations on, the
// default) and, in headless Chromium: the participant page lists the live demonstrations the
// services created; the newcomer takes the first one through the real form and gets a verified
// receipt; "Let simulated participants join" fills the rest of the cohort through the same
// participant client, so the cohort closes on its own and its hand-over arrives; the receipt is
// in the published list its screen links to; on the survey team's page (the receipt's link,
// signed in with the admin token) the survey is closed and released; its links open the release
// in the analyst view — whose coefficients equal `orthomask regress --json` on the downloaded
// release (1e-9 relative) — and in the audit view, which passes. The manifest says the release
// used teaching keys. DIR receives release.csv and manifest.json. Exits non-zero on any failure.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  repo, cli, parseArgs, waitFor, withServices, api, fitsWidth, analystCoefficients,
  sameCoefficients, run, answerEverything,
} from './lib.mjs';

const args = parseArgs(process.argv.slice(2));
const out = resolve(args.out ?? join(repo, 'target', 'e2e-newcomer'));
const log = (m) => console.log(`[e2e newcomer] ${m}`);

async function main() {
  await withServices('newcomer', out, async (services, browser) => {
    // The run command created the demonstrations on its own services.
    const listed = await api('GET', `${services.collector}/api/surveys`);
    const ids = listed.json.surveys.map((s) => s.survey);
    for (const id of ['leaps-demo', 'wellbeing-optional', 'shares-demo']) {
      if (!ids.includes(id)) throw new Error(`the demonstration ${id} is not listed: ${listed.text}`);
    }
    log(`live demonstrations: ${ids.join(', ')}`);

    // A newcomer on a phone: every screen of the loop must fit 375 pixels without sideways scrolling.
    const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
    const page = await context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console at ${page.url()}: ${m.text()}`); });

    // ── a newcomer takes the first listed demonstration ──────────────────────────────────────
    await page.goto(`${services.collector}/#/participate`);
    const first = page.getByTestId('live-survey').first();
    await first.waitFor({ timeout: 60000 });
    const href = await first.getAttribute('href');
    const survey = new URLSearchParams(href.split('?')[1]).get('survey');
    if (survey !== listed.json.surveys[0].survey) throw new Error(`the first link opens ${href}`);
    await fitsWidth(page, 'the list of surveys');
    await first.click();
    await page.getByTestId('live-demonstration').waitFor({ timeout: 60000 });
    await page.getByLabel('I have read this and agree to take part.').check();
    await page.getByRole('button', { name: 'Start the survey' }).click();
    await answerEverything(page);
    await fitsWidth(page, 'the review with what leaves the device');
    await page.getByRole('button', { name: 'Send' }).click();
    const hash = await page.getByTestId('receipt-hash').first().textContent({ timeout: 120000 });
    const receiptList = await page.getByTestId('receipt-list').first().getAttribute('href');
    log(`${survey}: receipt ${hash}`);

    // ── simulated participants fill the cohort through the participant client ────────────────
    await fitsWidth(page, 'the receipt');
    await page.getByTestId('simulate').click();
    const filled = page.getByTestId('simulate-status').filter({ hasText: /is full|was already full/ });
    await filled.waitFor({ timeout: 180000 });
    log(await filled.textContent());
    const handedOver = await waitFor(async () => {
      const s = await api('GET', `${services.collector}/api/surveys/${survey}/status`);
      return s.json.cohorts.find((c) => c.cohort === 0 && c.status === 'received') ?? null;
    }, 'cohort 0 to be handed over to the collector', 120);
    log(`cohort 0 closed on its own and was handed over with ${handedOver.records} records`);
    const published = await api('GET', receiptList);
    if (!published.json.upload_hashes.includes(hash)) throw new Error(`the receipt is not in ${receiptList}`);

    // ── the survey team's page: close, publish, analyst view, audit view ─────────────────────
    await page.getByTestId('team-page').click();
    // Signed in from the keyboard: the token field, typing, Enter.
    await page.locator('#admin-token').focus();
    await page.keyboard.type(services.admin);
    await page.keyboard.press('Enter');
    await page.getByTestId('survey-detail').waitFor({ timeout: 60000 });
    await fitsWidth(page, "the survey team's page");
    await page.getByTestId('close-survey').click();
    const analyst = page.getByTestId('analyst-link');
    await analyst.waitFor({ timeout: 180000 });
    const releaseUrl = await page.getByTestId('release-link').getAttribute('href');
    const manifestUrl = await page.getByTestId('manifest-link').getAttribute('href');
    const release = await api('GET', new URL(releaseUrl, services.collector).href);
    const manifest = await api('GET', new URL(manifestUrl, services.collector).href);
    await writeFile(join(out, 'release.csv'), release.text);
    await writeFile(join(out, 'manifest.json'), manifest.text);
    if (manifest.json.teaching_keys !== true) throw new Error('the manifest of a demonstration does not say it used teaching keys');
    log(`released n = ${manifest.json.n}; manifest: teaching keys, "${manifest.json.warnings[0]}"`);

    const auditHref = await page.getByTestId('audit-link').getAttribute('href');
    const query = new URLSearchParams((await analyst.getAttribute('href')).split('?')[1]);
    await analyst.click();
    const shown = await analystCoefficients(page);
    const cliFit = JSON.parse(execFileSync(cli, ['regress', '--input', join(out, 'release.csv'),
      '--y', query.get('y'), '--x', query.get('x'), '--json'], { encoding: 'utf8' }));
    const worst = sameCoefficients(cliFit, shown, 'CLI vs analyst view on the release');
    log(`analyst view: ${query.get('y')} ~ ${query.get('x')} equals the CLI on the release (largest relative difference ${worst.toExponential(2)})`);

    await page.goto(`${services.collector}/${auditHref}`);
    const overall = page.getByTestId('overall');
    await overall.waitFor({ timeout: 60000 });
    const verdict = await overall.textContent();
    await fitsWidth(page, 'the audit view');
    if (!/^Overall: (PASS|WARN) — \d+ passed, \d+ warnings, 0 failed/.test(verdict)) throw new Error(`audit: ${verdict}`);
    log(`audit view: ${verdict}`);
    if (problems.length) throw new Error(problems.join('; '));
  });
  log(`passed; files in ${out}`);
}

run('newcomer', main);
