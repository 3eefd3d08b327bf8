// The field form end to end (issue 13, "done means"): through the real services, one participant
// answers OFFLINE, in the SECOND LANGUAGE, THROUGH A BRANCH, and the release still equals the raw
// answers.
//
//   node e2e-services/field.mjs --out DIR
//
// Starts `orthomask serve all`, creates through the admin API a survey with a conditional
// question (`show_if`) and a complete Spanish translation, with invitations. The first
// participant's browser prefers Spanish: it opens its invitation online (the service worker keeps
// the app's files, never the signed offer), loses the connection without reloading, answers in
// Spanish (a smoker, so the follow-up is asked), sends — the masked upload waits in IndexedDB,
// and every store of the browser is read to show that no answer and no key material is kept
// (the offer's device key and the invitation nowhere, the upload's token and credential only in
// its outbox entry) — then reloads offline: the page says the survey needs a connection and
// lists the waiting upload; when the connection returns the list sends it and shows its receipt,
// and the device keeps nothing of it. The other participants answer online in English,
// smokers and not, so the follow-up is hidden for some (coded like a skipped optional item: the
// range's midpoint and `cigarettes_answered` 0). The cohort closes with exactly one upload per
// participant, and `orthomask regress` on the release equals the raw answers coded the same way,
// to 1e-9 relative. DIR receives raw.csv and release.csv.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { repo, cli, dist, parseArgs, waitFor, api, agree, withServices, fitsWidth, run } from './lib.mjs';
import { assertDeviceClean, watchKeyMaterial } from '../e2e/device-storage.mjs';

const args = parseArgs(process.argv.slice(2));
const out = resolve(args.out ?? join(repo, 'target', 'e2e-field'));
const log = (m) => console.log(`[e2e field] ${m}`);

const ID = 'e2e-field';
const DRAFT = {
  id: ID,
  title: 'Sleep and smoking (end-to-end test)',
  consent: 'This is an automated test. Your answers are masked on this device before anything is sent.',
  questions: [
    { id: 'smokes', label: 'Do you smoke?', kind: 'yes_no' },
    { id: 'cigarettes', label: 'How many cigarettes a day?', kind: 'integer', min: 1, max: 60,
      show_if: { question: 'smokes', equals: 'yes' } },
    { id: 'sleep', label: 'Hours of sleep on a typical night', kind: 'number', min: 3, max: 12 },
    { id: 'stress', label: 'Stress in the last month', kind: 'likert', points: 5, low_label: 'none', high_label: 'extreme' },
  ],
  translations: {
    es: {
      title: 'Sueño y tabaco (prueba de extremo a extremo)',
      consent: 'Esta es una prueba automática. Sus respuestas se enmascaran en este dispositivo antes de enviar nada.',
      questions: {
        smokes: { label: '¿Fuma?' },
        cigarettes: { label: '¿Cuántos cigarrillos al día?' },
        sleep: { label: 'Horas de sueño en una noche normal' },
        stress: { label: 'Estrés durante el último mes', low_label: 'nada', high_label: 'extremo' },
      },
    },
  },
  // p₁ = smokes, cigarettes, cigarettes_answered, sleep, stress and the QA column: cohorts of 7.
  cohort_size: 7,
  invitations: true,
};
// Distinctive answers; participant 0 answers offline in Spanish.
const ANSWERS = [
  { smokes: true, cigarettes: 23, sleep: 6.75, stress: 4 },
  { smokes: false, sleep: 8.25, stress: 2 },
  { smokes: true, cigarettes: 11, sleep: 7.1, stress: 3 },
  { smokes: false, sleep: 7.9, stress: 1 },
  { smokes: true, cigarettes: 35, sleep: 5.6, stress: 5 },
  { smokes: false, sleep: 9.2, stress: 2 },
  { smokes: true, cigarettes: 4, sleep: 7.7, stress: 3 },
];
const RAW_NUMBERS = [23, 6.75];
// orthomask_survey::coding: a hidden question is coded like a skipped optional one.
const COLUMNS = ['smokes', 'cigarettes', 'cigarettes_answered', 'sleep', 'stress'];
const coded = (a) => [a.smokes ? 1 : 0, a.cigarettes ?? (1 + 60) / 2, a.smokes ? 1 : 0, a.sleep, a.stress];

/** Answer through the form: the follow-up must appear exactly for smokers. */
async function answer(page, a, words) {
  const next = () => page.getByRole('button', { name: words.next }).click();
  await page.getByRole('radio', { name: a.smokes ? words.yes : words.no, exact: true }).check();
  await next();
  if (a.smokes) {
    await page.getByText(words.cigarettes).waitFor();
    await page.locator('input[type=number]').fill(String(a.cigarettes));
    await next();
  }
  await page.getByText(words.sleep).waitFor();
  await page.locator('input[type=number]').fill(String(a.sleep));
  await next();
  await page.getByRole('radio', { name: String(a.stress), exact: false }).first().check();
  await next();
  await page.getByRole('region', { name: words.leaves }).waitFor();
}
const ENGLISH = { next: /^(Next|Review)$/, yes: 'Yes', no: 'No', cigarettes: 'How many cigarettes a day?', sleep: 'Hours of sleep', leaves: 'What leaves your device' };
const SPANISH = { next: /^(Siguiente|Revisar)$/, yes: 'Sí', no: 'No', cigarettes: '¿Cuántos cigarrillos al día?', sleep: 'Horas de sueño', leaves: 'Lo que sale de su dispositivo' };

async function offlineInSpanish(browser, link, a, build) {
  const context = await browser.newContext({ locale: 'es-ES', viewport: { width: 375, height: 740 } });
  const secrets = watchKeyMaterial(context);
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  try {
    // Opened online: the service worker installs and keeps the app's files (not the offer).
    await page.goto(link);
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await page.getByRole('checkbox').waitFor({ timeout: 60000 });
    await page.getByRole('heading', { name: DRAFT.translations.es.title }).waitFor({ timeout: 60000 });
    // Issue 27: the page names the build the collector serves and how anyone can check it.
    const shown = await page.getByTestId('app-build').textContent();
    if (!shown.includes(build.slice(0, 12)) || !shown.includes(`--expect ${build}`)) throw new Error(`the page shows the build as ${JSON.stringify(shown)}, the deployment names ${build}`);
    await context.setOffline(true);
    log('offline: the form opened online keeps working, in Spanish');
    await page.getByLabel('He leído esto y acepto participar.').check();
    await page.getByRole('button', { name: 'Empezar la encuesta' }).click();
    await answer(page, a, SPANISH);
    await fitsWidth(page, 'the review at phone width');
    await page.getByRole('button', { name: 'Enviar', exact: true }).click();
    await page.getByTestId('form-waiting').waitFor({ timeout: 60000 });
    const waiting = await assertDeviceClean(page, RAW_NUMBERS, 'while waiting', secrets);
    if (waiting.length !== 1) throw new Error(`${waiting.length} uploads wait, expected 1`);
    if (secrets.deviceKeys.size !== 1 || secrets.invites.size !== 1) throw new Error(`the check did not know the offer's key material: ${secrets.deviceKeys.size} keys, ${secrets.invites.size} invitations`);
    log('waiting to send: only the masked upload is kept, with its own token and credential; no device key, no invitation (IndexedDB, Cache API, web storage read whole)');
    // Reloaded offline: nothing of the survey is on the device, so it does not open.
    await page.reload();
    const needs = page.getByTestId('needs-connection');
    await needs.waitFor({ timeout: 60000 });
    const line = await needs.getByRole('status').textContent();
    if (!/^Esta encuesta necesita conexión para abrirse; nada de lo que respondió se guarda en este dispositivo/.test(line)) throw new Error(`reloaded offline: ${line}`);
    await page.getByTestId('waiting-item').waitFor({ timeout: 60000 });
    log(`reloaded offline: "${line}", the waiting upload listed`);
    await context.setOffline(false);
    const panel = page.getByTestId('waiting-uploads');
    const hash = await panel.getByTestId('receipt-hash').first().textContent({ timeout: 120000 });
    await panel.getByRole('heading', { name: 'Gracias: se recibieron sus respuestas enmascaradas' }).waitFor();
    if ((await assertDeviceClean(page, RAW_NUMBERS, 'after sending', secrets)).length) throw new Error('the upload still waits after sending');
    if (problems.length) throw new Error(problems.join('; '));
    log(`online again: sent, receipt ${hash.slice(0, 16)}…; nothing of it is left on the device`);
    return hash;
  } finally {
    await context.close();
  }
}

async function onlineInEnglish(browser, link, a) {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(link);
    await page.getByLabel('I have read this and agree to take part.').check({ timeout: 60000 });
    await page.getByRole('button', { name: 'Start the survey' }).click();
    await answer(page, a, ENGLISH);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    return await page.getByTestId('receipt-hash').first().textContent({ timeout: 120000 });
  } finally {
    await context.close();
  }
}

async function main() {
  await withServices('field', out, async (services, browser) => {
    const created = await api('POST', `${services.collector}/api/admin/surveys`, DRAFT, services.admin);
    if (created.status !== 201) throw new Error(`creating the survey: ${created.status} ${created.text}`);
    const inv = await api('POST', `${services.collector}/api/admin/surveys/${ID}/invitations`, { count: ANSWERS.length }, services.admin);
    if (inv.status !== 201) throw new Error(`invitations: ${inv.status} ${inv.text}`);
    const links = inv.json.invitations.map((x) => x.participant_url);
    await writeFile(join(out, 'raw.csv'), `${COLUMNS.join(',')}\n${ANSWERS.map((a) => coded(a).join(',')).join('\n')}\n`);

    // The build the collector names is the one it serves, by an auditor's own check, and is the
    // built dist/ (issue 27).
    const build = (await api('GET', `${services.collector}/api/deployment`)).json.build;
    if (!/^[0-9a-f]{64}$/.test(build ?? '')) throw new Error(`the deployment names no build: ${build}`);
    const audited = execFileSync(cli, ['audit', '--app', `${services.collector}/`, '--build', dist], { encoding: 'utf8' }).trim();
    if (audited !== `same build ${build}`) throw new Error(`orthomask audit --app: ${audited}`);
    log(`the collector serves build ${build.slice(0, 12)}…, the built dist/ (orthomask audit --app)`);
    const hashes = [await offlineInSpanish(browser, links[0], ANSWERS[0], build)];
    for (let i = 1; i < ANSWERS.length; i += 3) {
      hashes.push(...await Promise.all(ANSWERS.slice(i, i + 3).map((a, j) => onlineInEnglish(browser, links[i + j], a))));
    }
    log(`${hashes.length} participants sent (one offline in Spanish, the others online in English)`);

    const closed = await api('POST', `${services.collector}/api/admin/surveys/${ID}/close`, {}, services.admin);
    if (closed.status !== 200) throw new Error(`closing: ${closed.status} ${closed.text}`);
    const release = await waitFor(async () => {
      const r = await api('GET', `${services.collector}/api/surveys/${ID}/release.csv`);
      return r.status === 200 ? r.text : null;
    }, 'the release', 180);
    await writeFile(join(out, 'release.csv'), release);
    const list = await api('GET', `${services.msp}/api/surveys/${ID}/cohorts/0/receipts`);
    const stored = list.json.upload_hashes;
    if (stored.length !== ANSWERS.length || stored.filter((h) => h === hashes[0]).length !== 1) {
      throw new Error(`cohort 0 stored ${stored.length} uploads; the offline participant's ${stored.filter((h) => h === hashes[0]).length} times`);
    }
    log(`exactly one upload per participant stored (${stored.length}), the offline one among them`);
    // Every upload named the build the pages computed from what they loaded — the served build —
    // and the receipt list and the release manifest count them under it (issue 27 §2).
    const counted = JSON.stringify([{ digest: build, uploads: ANSWERS.length }]);
    if (JSON.stringify(list.json.builds) !== counted) throw new Error(`the receipt list counts builds ${JSON.stringify(list.json.builds)}, expected ${counted}`);
    const manifest = (await api('GET', `${services.collector}/api/surveys/${ID}/manifest.json`)).json;
    if (JSON.stringify(manifest.builds) !== counted) throw new Error(`the manifest counts builds ${JSON.stringify(manifest.builds)}, expected ${counted}`);
    log(`all ${ANSWERS.length} uploads named the served build, and the receipt list and the manifest count them under it`);
    const regress = (csv) => JSON.parse(execFileSync(cli, ['regress', '--input', csv, '--y', 'sleep',
      '--x', 'cigarettes,cigarettes_answered,stress', '--json'], { encoding: 'utf8' }));
    const raw = regress(join(out, 'raw.csv'));
    const rel = regress(join(out, 'release.csv'));
    let worst = 0;
    raw.coefficients.forEach((c, k) => {
      if (c.name !== rel.coefficients[k].name) throw new Error(`coefficient ${k}: ${c.name} vs ${rel.coefficients[k].name}`);
      worst = Math.max(worst, agree(c.estimate, rel.coefficients[k].estimate, `${c.name}, raw vs release`));
    });
    worst = Math.max(worst, agree(raw.r_squared, rel.r_squared, 'R², raw vs release'));
    log(`sleep ~ cigarettes + cigarettes_answered + stress: the release equals the raw answers (largest relative difference ${worst.toExponential(2)})`);
  });
  log(`passed; files in ${out}`);
}

run('field', main);
