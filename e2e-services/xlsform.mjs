// A team's XLSForm becomes a live survey without retyping (issue 29 §1), through the real
// services and the survey team's page in headless Chromium.
//
//   node e2e-services/xlsform.mjs --out DIR
//
// openpyxl writes the forms (crates/xlsform/tests/forms/make_forms.py, the Python of
// ORTHOMASK_PYTHON, else target/py-test-venv): a form of the kinds ODK's documentation shows
// (metadata, consent, groups, notes, bounds, Likert, yes/no, categorical and multiple selects,
// skip logic, English and Spanish), and one with a geopoint. On #/admin the team picks the
// geopoint form under "Import XLSForm" and gets the import's one line naming the row; picks the
// real form (the page sends the workbook to the collector, POST /api/admin/xlsform, which reads
// it), and the builder, the JSON editor and the plan fill in (the timestamps it left out
// listed); creates the survey with one click; invites a participant, who opens the link and
// meets the form's consent and first question. The survey the collector signed holds exactly
// the questions, translations and terms `orthomask survey import` reads from the same file.
// DIR receives the forms and cli-draft.json. Exits non-zero on any failure; stops the services.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { repo, cli, parseArgs, api, withServices, run } from './lib.mjs';

const args = parseArgs(process.argv.slice(2));
const out = resolve(args.out ?? join(repo, 'target', 'e2e-xlsform'));
const log = (m) => console.log(`[e2e xlsform] ${m}`);
const python = process.env.ORTHOMASK_PYTHON
  ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'py-test-venv', 'bin', 'python');

/** The text of a one-line message, once it is not empty. */
async function oneLine(locator, what) {
  await locator.filter({ hasText: /\S/ }).waitFor({ timeout: 30000 });
  const text = (await locator.textContent()).trim();
  if (!text || text.includes('\n')) throw new Error(`${what}: not one line: ${JSON.stringify(text)}`);
  return text;
}

/** The same JSON value, whatever the order of object keys. */
const same = (a, b) => isDeepStrictEqual(a, b);

async function main() {
  await withServices('xlsform', out, async (services, browser) => {
    const forms = join(out, 'forms');
    execFileSync(python, [join(repo, 'crates/xlsform/tests/forms/make_forms.py'), forms]);
    const form = join(forms, 'accepted.xlsx');
    // What the command line reads from the same file: the oracle for what the page creates.
    const cliDraft = JSON.parse(execFileSync(cli, ['survey', 'import', form], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    await writeFile(join(out, 'cli-draft.json'), JSON.stringify(cliDraft, null, 2));

    const page = await (await browser.newContext()).newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e}`));
    await page.goto(`${services.collector}/#/admin`);
    await page.fill('#admin-token', services.admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('new-survey').click();

    // A form with a geopoint: the import's one line, naming the file, sheet and row.
    await page.getByLabel(/An ODK, KoboToolbox or SurveyCTO form/).setInputFiles(join(forms, 'refuse_location.xlsx'));
    const refused = await oneLine(page.getByTestId('xlsform-error'), 'the geopoint form');
    if (!refused.startsWith('refuse_location.xlsx: survey sheet, row 5: type "geopoint" records a location')) {
      throw new Error(`the refusal says ${JSON.stringify(refused)}`);
    }
    log(`a geopoint: "${refused}"`);

    // The team's real form: the builder, the editor and the plan fill in.
    await page.getByLabel(/An ODK, KoboToolbox or SurveyCTO form/).setInputFiles(form);
    const imported = page.getByTestId('xlsform-imported');
    await imported.waitFor({ timeout: 30000 });
    const said = await imported.textContent();
    for (const row of [2, 3, 4]) {
      if (!said.includes(`survey sheet, row ${row}:`)) throw new Error(`the left-out timestamps are not listed: ${said}`);
    }
    if (await page.getByTestId('xlsform-error').count()) throw new Error('the refusal stays after a good import');
    if ((await page.inputValue('#b-id')) !== 'health-habits') throw new Error(`survey id ${await page.inputValue('#b-id')}`);
    if ((await page.inputValue('#b-title')) !== 'Health habits') throw new Error(`title ${await page.inputValue('#b-title')}`);
    if ((await page.inputValue('#b-consent')) !== cliDraft.consent) throw new Error('the consent is not the form\'s');
    const inEditor = JSON.parse(await page.getByTestId('json-editor').inputValue());
    if (!same(inEditor, cliDraft)) throw new Error(`the editor's draft differs from orthomask survey import's:\n${JSON.stringify(inEditor)}\n${JSON.stringify(cliDraft)}`);
    if ((await page.getByTestId('json-error').textContent()) !== '') throw new Error(`the editor refuses the imported draft: ${await page.getByTestId('json-error').textContent()}`);
    const shown = await page.getByTestId('form-preview').locator('legend .label').allTextContents();
    if (shown.length !== cliDraft.questions.length || shown[0] !== 'How old are you?') throw new Error(`the preview shows ${JSON.stringify(shown)}`);
    await page.getByTestId('plan').waitFor({ timeout: 30000 });
    const cohort = await page.getByTestId('plan-cohort-size').textContent();
    if (cohort !== '40') throw new Error(`the plan's cohort size ${cohort}, the form's settings say 40`);
    log(`imported ${cliDraft.questions.length} questions (${shown.slice(0, 3).join(' | ')} …); plan p1 = ${await page.getByTestId('plan-p1').textContent()}, p2 = ${await page.getByTestId('plan-p2').textContent()}, cohorts of ${cohort}`);

    // Created with one click: nothing retyped.
    await page.getByTestId('create').click();
    const answer = JSON.parse(await page.getByTestId('create-answer').textContent({ timeout: 60000 }));
    if (answer.survey !== 'health-habits') throw new Error(`created: ${JSON.stringify(answer)}`);
    log(`survey ${answer.survey} created (p1 = ${answer.p1}, p2 = ${answer.p2})`);

    // A participant opens an invitation and meets the form's consent and first question.
    const inv = await api('POST', `${services.collector}/api/admin/surveys/health-habits/invitations`, { count: 1 }, services.admin);
    if (inv.status !== 201) throw new Error(`invitations: ${inv.status} ${inv.text}`);
    const { participant_url: link, token } = inv.json.invitations[0];
    const participant = await (await browser.newContext()).newPage();
    participant.on('pageerror', (e) => problems.push(`participant page error: ${e}`));
    await participant.goto(link);
    await participant.getByText(cliDraft.consent).first().waitFor({ timeout: 60000 });
    await participant.getByLabel('I have read this and agree to take part.').check();
    await participant.getByRole('button', { name: 'Start the survey' }).click();
    await participant.getByText('How old are you?').first().waitFor({ timeout: 30000 });
    log('a participant opened the invitation: the form\'s consent, then "How old are you?"');

    // What the collector signed is the form as the command line reads it.
    const offer = await api('POST', `${services.collector}/api/surveys/health-habits/definition`, { invite: token });
    if (offer.status !== 200) throw new Error(`definition: ${offer.status} ${offer.text}`);
    const signed = JSON.parse(offer.json.signed.definition);
    for (const field of ['id', 'title', 'description', 'consent', 'language', 'questions', 'translations', 'terms']) {
      if (!same(signed[field], cliDraft[field])) throw new Error(`the signed definition's ${field} differs from the form's: ${JSON.stringify(signed[field])}`);
    }
    if (signed.masking.cohort_size !== 40) throw new Error(`cohort size ${signed.masking.cohort_size}`);
    log(`the signed definition holds the form's ${signed.questions.length} questions, ${Object.keys(signed.translations).join(', ')} translation and ${signed.terms.length} terms`);
    if (problems.length) throw new Error(problems.join('; '));
  });
  log(`passed; files in ${out}`);
}

run('xlsform', main);
