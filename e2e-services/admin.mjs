// The survey team's page (#/admin) end to end, through the real services.
//
//   node e2e-services/admin.mjs --out DIR
//
// Starts `orthomask serve all` on loopback (its own data directory, --web-dir the built dist/),
// and as the survey team in headless Chromium: a wrong admin token gets one clear line; the right
// one (<data-dir>/admin-token) signs in; the builder makes a survey with one question of each
// kind (yes/no, integer, number, Likert — optional — and categorical) and invitations on; a
// cohort too small shows the plan's one-line reason before anything is sent; an open survey
// (invitations off, share mode) gets the note recommending differential privacy, with the option
// one click away, and a survey with invitations does not (issue 20 §9); invalid JSON in the
// editor shows one line with line and column; the survey is created; its page shows how often
// cohorts were spoilt and the refused hand-over claims (none here); invitations are generated
// and downloaded as CSV; headless participants (one browser context each) answer through their
// invitation links; the team closes the survey on the page and follows the analyst view link,
// whose regression must equal `orthomask regress --json` on the answers the participants typed,
// coded the same way (1e-9 relative, every coefficient), and — the link carrying the release's
// datapackage.json — whose smoker × region table names its levels by the questions' labels with
// the answers' counts (issue 29 §2). DIR receives raw.csv and
// invitations.csv. Exits non-zero on any failure; stops the services it started.
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  repo, cli, parseArgs, mulberry32, waitFor, withServices, fitsWidth, analystCoefficients,
  sameCoefficients, run,
} from './lib.mjs';

const args = parseArgs(process.argv.slice(2));
const out = resolve(args.out ?? join(repo, 'target', 'e2e-admin'));
const COHORT_SIZE = 10;
const log = (m) => console.log(`[e2e admin] ${m}`);

// ── generated answers, known only to this script ──────────────────────────────────────────────
function answersOf(i) {
  const u = mulberry32(104729 * (i + 1));
  return {
    smoker: i % 3 === 0,
    age: 18 + Math.floor(u() * 72),
    income: 10 + u() * 200 + u() * 1e-6,
    mood: i === 0 || i === 3 ? null : 1 + Math.floor(u() * 5),
    region: i % 2,
  };
}
// The release's coding (orthomask_survey::coding): yes/no 0/1, the Likert point, a skipped
// optional item at its range's midpoint with `mood_answered` 0, dummies for all options but the
// first.
const COLUMNS = ['smoker', 'age', 'income', 'mood', 'mood_answered', 'region=south'];
const coded = (a) => [a.smoker ? 1 : 0, a.age, a.income, a.mood ?? 3, a.mood === null ? 0 : 1, a.region];

/** The text of a one-line message, once it is not empty. */
async function oneLine(locator, what) {
  await locator.filter({ hasText: /\S/ }).waitFor({ timeout: 30000 });
  const text = (await locator.textContent()).trim();
  if (!text || text.includes('\n')) throw new Error(`${what}: not one line: ${JSON.stringify(text)}`);
  return text;
}

// ── one participant in the real form (run.mjs's way of filling it in) ─────────────────────────
async function participate(browser, participantUrl, a) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  try {
    await page.goto(participantUrl);
    await page.getByLabel('I have read this and agree to take part.').check({ timeout: 60000 });
    await page.getByRole('button', { name: 'Start the survey' }).click();
    const next = () => page.getByRole('button', { name: /^(Next|Review)$/ }).click();
    const radio = (name) => page.getByRole('radio', { name, exact: true }).check();
    await radio(a.smoker ? 'Yes' : 'No');
    await next();
    for (const value of [a.age, a.income]) {
      await page.locator('input[type=number]').fill(String(value));
      await next();
    }
    if (a.mood === null) {
      await page.getByRole('button', { name: 'Skip this question' }).click();
    } else {
      await radio(a.mood === 1 ? '1 (never)' : a.mood === 5 ? '5 (always)' : String(a.mood));
      await next();
    }
    await radio(a.region === 1 ? 'south' : 'north');
    await next();
    await page.getByRole('region', { name: 'What leaves your device' }).waitFor();
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('receipt-hash').first().waitFor({ timeout: 120000 });
    if (problems.length) throw new Error(problems.join('; '));
  } catch (e) {
    throw new Error(`${e.message}${problems.length ? ` (${problems.join('; ')})` : ''}`);
  } finally {
    await context.close();
  }
}

// ── the survey team's page ────────────────────────────────────────────────────────────────────
async function buildSurvey(page, id) {
  await page.fill('#b-id', id);
  await page.fill('#b-title', 'Survey team end-to-end test');
  await page.fill('#b-consent', 'This is an automated test. Your answers are masked on this device.');
  const questions = [
    { kind: 'yes_no', id: 'smoker', label: 'Do you smoke?' },
    { kind: 'integer', id: 'age', label: 'Your age in years', min: '18', max: '90' },
    { kind: 'number', id: 'income', label: 'Your monthly income (hundreds)', min: '0', max: '250', help: 'Any number from 0 to 250.' },
    { kind: 'likert', id: 'mood', label: 'How often are you cheerful?', points: '5', low: 'never', high: 'always', optional: true },
    { kind: 'categorical', id: 'region', label: 'Where do you live?', options: 'north\nsouth' },
  ];
  for (const [i, q] of questions.entries()) {
    if (i > 0) await page.getByTestId('add-question').click();
    await page.selectOption(`#b-q${i}-kind`, q.kind);
    await page.fill(`#b-q${i}-id`, q.id);
    await page.fill(`#b-q${i}-label`, q.label);
    if (q.help) await page.fill(`#b-q${i}-help`, q.help);
    if (q.min) { await page.fill(`#b-q${i}-min`, q.min); await page.fill(`#b-q${i}-max`, q.max); }
    if (q.points) {
      await page.fill(`#b-q${i}-points`, q.points);
      await page.fill(`#b-q${i}-low`, q.low);
      await page.fill(`#b-q${i}-high`, q.high);
    }
    if (q.options) await page.fill(`#b-q${i}-options`, q.options);
    if (q.optional) await page.check(`#b-q${i}-optional`);
  }
  if (!(await page.isChecked('#b-invitations'))) await page.check('#b-invitations');
  // The preview shows every question as the participant will see it.
  const shown = await page.getByTestId('form-preview').locator('legend .label').allTextContents();
  if (shown.join('|') !== questions.map((q) => q.label).join('|')) throw new Error(`the preview shows ${JSON.stringify(shown)}`);

  // Skip logic in the builder, through its labelled controls: "region" shown only when "smoker"
  // is yes — the preview says so and the JSON editor holds the `show_if` — then taken off again
  // (the participants below answer every question).
  const draftInEditor = async () => JSON.parse(await page.getByTestId('json-editor').inputValue());
  await page.getByLabel('Show only when an earlier answer is …').last().check();
  await page.selectOption('#b-q4-if-question', 'smoker');
  await page.selectOption('#b-q4-if-condition', 'equals');
  await page.selectOption('#b-q4-if-value', 'yes');
  const when = await page.getByTestId('preview-condition').textContent();
  if (!/smoker/.test(when) || !/yes/.test(when)) throw new Error(`the preview describes the branch as ${JSON.stringify(when)}`);
  const branched = (await draftInEditor()).questions[4].show_if;
  if (branched?.question !== 'smoker' || branched?.equals !== 'yes' || Object.keys(branched).length !== 2) {
    throw new Error(`the draft's show_if: ${JSON.stringify(branched)}`);
  }
  await page.getByLabel('Show only when an earlier answer is …').last().uncheck();
  if ((await draftInEditor()).questions[4].show_if !== undefined) throw new Error('the condition stays after it was taken off');
  if (await page.getByTestId('preview-condition').count()) throw new Error('the preview still shows a condition');
  log(`the builder made and removed a branch; the preview said "${when}"`);
}

async function main() {
  await withServices('admin', out, async (services, browser) => {
    log(`collector ${services.collector}, provider ${services.msp}`);
    const team = await browser.newContext({ acceptDownloads: true });
    const page = await team.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e}`));
    await page.goto(`${services.collector}/#/admin`);

    // A wrong token: one clear line, the collector's own message.
    await page.fill('#admin-token', 'not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refused = await oneLine(page.getByTestId('sign-in-error'), 'the wrong token');
    if (!/admin token/.test(refused)) throw new Error(`the wrong token's message does not say what is wrong: ${refused}`);
    log(`wrong token: "${refused}"`);
    await page.fill('#admin-token', services.admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('new-survey').waitFor();
    // The token stays in this tab: nothing that outlives it or reaches other tabs holds it, and
    // another tab of the same browser must sign in again.
    const kept = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, cookies: document.cookie }));
    if (kept.includes(services.admin)) throw new Error('the admin token is in localStorage or a cookie');
    const otherTab = await team.newPage();
    await otherTab.goto(`${services.collector}/#/admin`);
    await otherTab.locator('#admin-token').waitFor({ timeout: 60000 });
    if (await otherTab.getByTestId('new-survey').count()) throw new Error('another tab is signed in');
    await otherTab.close();
    log('the admin token stays in its tab (not in localStorage or cookies; another tab must sign in)');
    await page.getByTestId('new-survey').click();

    const id = 'e2e-admin';
    await buildSurvey(page, id);
    // No cohort size typed: the plan chooses one (orthomask_survey::cohort_choice, the rule
    // `orthomask pipeline` applies by default) and the preview shows it.
    if ((await page.inputValue('#b-cohort-size')) !== '') throw new Error('the cohort size is not left to the plan');
    const chosen = Number(await page.getByTestId('plan-cohort-size').textContent());
    if (!(Number.isInteger(chosen) && chosen >= 8)) throw new Error(`the plan's cohort size: ${chosen}`);
    log(`no cohort size typed: the plan chose cohorts of ${chosen}`);
    // An unsafe design: the plan's one-line reason before anything is sent.
    await page.fill('#b-cohort-size', '5');
    const unsafe = await oneLine(page.getByTestId('plan-error'), 'the unsafe design');
    if (!/cohort_size 5 is too small for 7 data columns/.test(unsafe)) throw new Error(`unexpected refusal: ${unsafe}`);
    if (!(await page.getByTestId('create').isDisabled())) throw new Error('an unsafe design can be created');
    log(`cohort of 5: "${unsafe}"`);
    await page.fill('#b-cohort-size', String(COHORT_SIZE));
    await page.getByTestId('plan').waitFor();
    // seed 000 needs p1 < n: a cohort is released only with at least the plan's minimum of
    // records (p1 + 1 = 8 here: 6 answer columns and QA), so that many participants answer.
    const participants = Number(await page.getByTestId('plan-min-cohort').textContent());
    if (!(participants >= 3 && participants <= COHORT_SIZE)) throw new Error(`minimum cohort ${participants}`);
    log(`plan: p1 = ${await page.getByTestId('plan-p1').textContent()}, p2 = ${await page.getByTestId('plan-p2').textContent()}, sigma = ${await page.getByTestId('plan-sigma').textContent()}, failure probability ${await page.getByTestId('plan-failure').textContent()}, minimum cohort ${participants}`);

    // Issue 22 §1: model terms through the builder's own control. age² and income × region=south
    // reach the draft the JSON editor shows and the plan counts each (p₁ one more); a power is
    // offered only the numeric answers; a term left unfinished is one line; removing the terms
    // restores the plan (the participants below answer the survey without them).
    const p1 = Number(await page.getByTestId('plan-p1').textContent());
    const terms = page.getByTestId('terms-editor');
    await page.selectOption('#t-kind', 'power');
    const offered = await page.locator('#t-of option').allTextContents();
    if (offered.join(',') !== '—,age,income,mood') throw new Error(`a power is offered ${offered}`);
    await terms.getByTestId('add-term').click();
    const unfinished = await oneLine(page.getByTestId('term-error'), 'the unfinished term');
    if (unfinished !== 'New term: input: choose the answer column') throw new Error(`unfinished term: ${unfinished}`);
    await page.selectOption('#t-of', 'age');
    await terms.getByTestId('add-term').click();
    await page.locator('[data-term=age_sq]').waitFor();
    await page.selectOption('#t-kind', 'product');
    await page.selectOption('#t-of', 'income');
    await page.selectOption('#t-with', 'region=south');
    await terms.getByTestId('add-term').click();
    await page.locator('[data-term=income_x_region_south]').waitFor();
    const declared = JSON.parse(await page.getByTestId('json-editor').inputValue()).terms;
    const want = [{ id: 'age_sq', kind: 'power', of: 'age', exponent: 2 }, { id: 'income_x_region_south', kind: 'product', of: ['income', 'region=south'] }];
    // Compared field by field (the editor writes keys in its own order).
    const canonical = (terms) => JSON.stringify((terms ?? []).map((t) => Object.fromEntries(Object.entries(t).sort())));
    if (canonical(declared) !== canonical(want)) throw new Error(`the draft's terms: ${JSON.stringify(declared)}`);
    await waitFor(async () => Number(await page.getByTestId('plan-p1').textContent()) === p1 + 2, 'the plan to count both terms', 30);
    log(`terms control: ${want.map((t) => t.id).join(', ')} declared, p1 ${p1} → ${p1 + 2}`);
    await page.getByRole('button', { name: 'Remove the term income_x_region_south' }).click();
    await page.getByRole('button', { name: 'Remove the term age_sq' }).click();
    await waitFor(async () => Number(await page.getByTestId('plan-p1').textContent()) === p1, 'the plan without the terms', 30);
    if (JSON.parse(await page.getByTestId('json-editor').inputValue()).terms !== undefined) throw new Error('the removed terms stay in the draft');

    // Issue 20 §9: an open survey is told to turn on differential privacy, one click away; a
    // survey with invitations is not.
    const dpNote = page.getByTestId('open-survey-dp-note');
    if (await dpNote.count()) throw new Error('a survey with invitations gets the open-survey DP note');
    await page.uncheck('#b-invitations');
    await page.check('#b-share-mode');
    await dpNote.waitFor({ timeout: 30000 });
    const advice = await dpNote.textContent();
    if (!/Anyone can take places in an open survey/.test(advice) || !/differential privacy/.test(advice)) throw new Error(`the DP note says ${JSON.stringify(advice)}`);
    if ((await dpNote.count()) !== 1) throw new Error('the DP note is shown more than once');
    await dpNote.getByRole('button', { name: 'Turn on differential privacy' }).click();
    await dpNote.waitFor({ state: 'detached', timeout: 30000 });
    if (!(await page.isChecked('#b-dp'))) throw new Error('the note\'s button did not turn DP on');
    await page.locator('#b-epsilon').waitFor();
    // Share mode now allows device-side DP: the collector's plan has a DP σ for it.
    await page.getByTestId('plan-dp-sigma').waitFor({ timeout: 30000 });
    log(`open survey: the DP note ("${advice.slice(0, 60)}…"), one click turned DP on (DP σ ${await page.getByTestId('plan-dp-sigma').textContent()})`);
    await page.uncheck('#b-dp');
    await dpNote.waitFor({ timeout: 30000 });
    await page.uncheck('#b-share-mode');
    await page.check('#b-invitations');
    await dpNote.waitFor({ state: 'detached', timeout: 30000 });
    await page.getByTestId('plan').waitFor();

    // Invalid JSON in the editor: one line with line and column; the builder is untouched.
    const editor = page.getByTestId('json-editor');
    const good = await editor.inputValue();
    if (JSON.parse(good).questions.length !== 5) throw new Error(`the editor does not hold the builder's draft: ${good}`);
    await editor.fill(good.replace('"title": ', '"title" '));
    const invalid = await oneLine(page.getByTestId('json-error'), 'invalid JSON');
    if (!/^JSON line \d+, column \d+: expected `:`/.test(invalid)) throw new Error(`unexpected editor message: ${invalid}`);
    if (!(await page.getByTestId('create').isDisabled())) throw new Error('invalid JSON can be created');
    log(`invalid JSON: "${invalid}"`);
    await editor.fill(good);
    await waitFor(async () => (await page.getByTestId('json-error').textContent()) === '', 'the editor to accept the draft again', 30);
    if (await page.getByTestId('create').isDisabled()) throw new Error('the restored draft cannot be created');

    // The builder, its preview and the editor fit a phone's width too.
    await page.setViewportSize({ width: 375, height: 740 });
    await fitsWidth(page, 'the builder');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByTestId('create').click();
    const answer = JSON.parse(await page.getByTestId('create-answer').textContent({ timeout: 60000 }));
    if (answer.survey !== id || answer.min_cohort_size !== participants) throw new Error(`created: ${JSON.stringify(answer)}`);
    await page.getByTestId('open-created').click();

    // Issue 20 §8: how often cohorts were spoilt and the refused hand-over claims (none yet).
    const spoilt = (await page.getByTestId('spoilt').textContent({ timeout: 60000 })).trim();
    if (spoilt !== 'No cohort was spoilt (none was left out for invalid data).') throw new Error(`spoilt cohorts: ${spoilt}`);
    const refusedClaims = (await page.getByTestId('refused-handovers').textContent()).trim();
    if (refusedClaims !== 'None: every hand-over claim was believed.') throw new Error(`refused hand-overs: ${refusedClaims}`);
    log(`survey page: "${spoilt}" "${refusedClaims}"`);

    // Invitations, downloaded as CSV.
    await page.fill('#invite-count', String(participants));
    await page.getByTestId('invite').click();
    await page.getByTestId('invite-result').waitFor({ timeout: 60000 });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download the invitations (CSV)' }).click(),
    ]);
    const csv = await readFile(await download.path(), 'utf8');
    await writeFile(join(out, 'invitations.csv'), csv);
    const [header, ...rows] = csv.trim().split('\n');
    if (header !== 'participant_url,token' || rows.length !== participants) throw new Error(`invitations.csv: ${csv}`);
    const links = rows.map((r) => {
      const [url, token] = r.split(',');
      if (!url.includes(`invite=${token}`)) throw new Error(`invitation row ${r}`);
      return url;
    });
    log(`${links.length} invitations downloaded as ${download.suggestedFilename()}`);

    const answers = Array.from({ length: participants }, (_, i) => answersOf(i));
    await writeFile(join(out, 'raw.csv'), `${COLUMNS.join(',')}\n${answers.map((a) => coded(a).join(',')).join('\n')}\n`);
    for (let i = 0; i < participants; i += 4) {
      await Promise.all(answers.slice(i, i + 4).map((a, j) => participate(browser, links[i + j], a)));
      log(`${Math.min(i + 4, participants)}/${participants} participants sent their masked answers`);
    }

    // Watching: the counts follow the invitations (every participant opened one).
    const counts = page.getByTestId('invitation-counts');
    await counts.filter({ hasText: `${participants} opened` }).waitFor({ timeout: 60000 });
    // The team closes cohort 0 on the page (not full: the minimum answered); its hand-over
    // arrives and uses the invitations up.
    await page.getByRole('button', { name: 'Close cohort 0' }).click();
    await page.locator('tr[data-cohort="0"][data-status="received"]').waitFor({ timeout: 180000 });
    await counts.filter({ hasText: `${participants} used` }).waitFor({ timeout: 60000 });
    log(`cohort 0 closed on the page and received; invitations: ${await counts.textContent()}`);

    // The team closes the survey on the page and follows the analyst view link.
    await page.getByTestId('close-survey').click();
    const analyst = page.getByTestId('analyst-link');
    await analyst.waitFor({ timeout: 180000 });
    const status = await page.getByTestId('survey-status').textContent();
    if (status !== 'released') throw new Error(`survey status ${status}`);
    if ((await page.getByTestId('receipt-lists').locator('a').count()) < 1) throw new Error('no receipt list link');
    const href = await analyst.getAttribute('href');
    log(`released; following ${href}`);
    await analyst.click();
    const shown = await analystCoefficients(page);
    const raw = JSON.parse(execFileSync(cli, ['regress', '--input', join(out, 'raw.csv'), '--y', 'age',
      '--x', COLUMNS.filter((c) => c !== 'age').join(','), '--json'], { encoding: 'utf8' }));
    const worst = sameCoefficients(raw, shown, 'raw answers vs analyst view on the release');
    log(`the analyst view's regression equals the raw answers' (largest relative difference ${worst.toExponential(2)})`);
    // Issue 29 §2: the link carries the release's data package, so the contingency tables name
    // their levels by the questions' labels; smoker × region equals the answers counted here.
    if (!href.includes('&package=')) throw new Error(`the analyst link carries no data package: ${href}`);
    const table = page.locator('table.counts[data-rows="smoker"][data-columns="region"]');
    await table.waitFor({ timeout: 60000 });
    const cells = await table.locator('tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    const labelled = [['smoker = yes', true], ['smoker = no', false]].map(([label, smoker]) => [label,
      ...[0, 1].map((region) => Array.from({ length: participants }, (_, i) => answersOf(i))
        .filter((a) => a.smoker === smoker && a.region === region).length)]);
    const levels = cells[0].slice(1, 3);
    if (levels.join("|") !== "region = north|region = south") throw new Error(`the table's columns are ${JSON.stringify(levels)}`);
    for (const [k, want] of labelled.entries()) {
      const got = cells[k + 1].slice(0, 3);
      if (got[0] !== want[0] || Number(got[1]) !== want[1] || Number(got[2]) !== want[2]) {
        throw new Error(`smoker × region row ${JSON.stringify(got)}, the answers give ${JSON.stringify(want)}`);
      }
    }
    log(`the analyst view's smoker × region table carries the labels and the answers' counts: ${JSON.stringify(labelled)}`);
    if (problems.length) throw new Error(problems.join('; '));
  });
  log(`passed; files in ${out}`);
}

run('admin', main);
