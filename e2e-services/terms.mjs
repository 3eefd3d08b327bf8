// Model terms computed on the device, end to end (issue 22 §1's test): a survey of y, age, income
// and smoker declaring the terms `age_sq` (age²) and `income_x_smoker` (income × smoker) is
// answered in Chromium through the real participant form; the release's fit of
// `y ~ age + age_sq + income + smoker + income_x_smoker` (`orthomask regress`) equals R's
// `lm(y ~ age + I(age^2) + income*smoker)` on the raw answers the script typed.
//
//   node e2e-services/terms.mjs --out DIR
//
// R is the independent oracle: it computes age² and the interaction itself from the raw columns,
// so the comparison checks the device's terms as well as the masking; the script never fits a
// model itself. DIR receives raw.csv (the typed answers, smoker 0/1), release.csv, manifest.json
// and r.csv (R's coefficient table).
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { repo, cli, parseArgs, waitFor, api, agree, withServices, run, TOLERANCE } from './lib.mjs';

const args = parseArgs(process.argv.slice(2));
const out = resolve(args.out ?? join(repo, 'target', 'e2e-terms'));
const log = (m) => console.log(`[e2e terms] ${m}`);

const ID = 'e2e-terms';
const QUESTIONS = [
  { id: 'y', label: 'Your wellbeing score', kind: 'number', min: 0, max: 200 },
  { id: 'age', label: 'Your age in years', kind: 'integer', min: 18, max: 90 },
  { id: 'income', label: 'Your monthly income (hundreds)', kind: 'number', min: 0, max: 250 },
  { id: 'smoker', label: 'Do you smoke?', kind: 'yes_no' },
];
const DRAFT = {
  id: ID,
  title: 'Age, income and smoking (end-to-end test)',
  consent: 'This is an automated test. Your answers are masked on this device before anything is sent.',
  questions: QUESTIONS,
  // The shape of crates/survey/src/definition.rs `Term` (docs/draft-cases.json, "terms").
  terms: [
    { id: 'age_sq', kind: 'power', of: 'age', exponent: 2 },
    { id: 'income_x_smoker', kind: 'product', of: ['income', 'smoker'] },
  ],
  // p₁ = 4 answers + 2 terms + the QA column = 7, so the floor is 8: one cohort of 12.
  cohort_size: 12,
  invitations: true,
};
// Fixed answers, typed as written: ages over the whole range (so age and age² are not nearly
// collinear), incomes spread for smokers and non-smokers alike (so the interaction is
// identified), six smokers; y a quadratic in age with an income slope that differs for smokers,
// plus noise, rounded to three decimals.
const ANSWERS = [
  { y: '52.067', age: '19', income: '12.5', smoker: true },
  { y: '100.26', age: '24', income: '180.25', smoker: false },
  { y: '65.014', age: '31', income: '64.75', smoker: false },
  { y: '86.236', age: '37', income: '97.4', smoker: true },
  { y: '88.963', age: '42', income: '143.6', smoker: true },
  { y: '68.214', age: '48', income: '38.9', smoker: false },
  { y: '112.969', age: '53', income: '210.3', smoker: true },
  { y: '87.078', age: '59', income: '75.15', smoker: false },
  { y: '100.283', age: '64', income: '121.8', smoker: true },
  { y: '79.296', age: '71', income: '55.45', smoker: false },
  { y: '123.551', age: '78', income: '160.7', smoker: false },
  { y: '70.551', age: '86', income: '29.35', smoker: true },
];
const X = ['age', 'age_sq', 'income', 'smoker', 'income_x_smoker'];
/** Our column name → R's coefficient name in `lm(y ~ age + I(age^2) + income*smoker)`. */
const IN_R = { '(Intercept)': '(Intercept)', age: 'age', age_sq: 'I(age^2)', income: 'income', smoker: 'smoker', income_x_smoker: 'income:smoker' };
// R's coefficient table, 17 significant digits (every double read back exactly).
const R_FIT = `args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
s <- summary(lm(y ~ age + I(age^2) + income*smoker, data = d))$coefficients
cat("name,estimate,std_error\\n", sprintf("%s,%.17g,%.17g\\n", rownames(s), s[, 1], s[, 2]), sep = "")
`;
// R's exact tests of the same model on the raw answers (issue 22 §2–3): the RESET-style test of
// the declared power (the model without I(age^2)), the Chow test of the group smoker (the pooled
// model without smoker and income:smoker), and the normal log-likelihood, AIC and BIC.
const R_TESTS = `args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
full <- lm(y ~ age + I(age^2) + income*smoker, data = d)
reset <- anova(lm(y ~ age + income*smoker, data = d), full)
chow <- anova(lm(y ~ age + I(age^2) + income, data = d), full)
cat(sprintf("%s,%.17g\\n", c("reset.F", "reset.p", "chow.F", "chow.p", "log_likelihood", "aic", "bic"),
    c(reset$F[2], reset$\`Pr(>F)\`[2], chow$F[2], chow$\`Pr(>F)\`[2], as.numeric(logLik(full)), AIC(full), BIC(full))), sep = "")
`;

/** One participant through the real form, online in English; answers the receipt. */
async function participate(browser, link, a) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  try {
    await page.goto(link);
    await page.getByLabel('I have read this and agree to take part.').check({ timeout: 60000 });
    await page.getByRole('button', { name: 'Start the survey' }).click();
    const next = () => page.getByRole('button', { name: /^(Next|Review)$/ }).click();
    for (const q of QUESTIONS.slice(0, 3)) {
      await page.getByText(q.label).waitFor();
      await page.locator('input[type=number]').fill(a[q.id]);
      await next();
    }
    await page.getByText(QUESTIONS[3].label).waitFor();
    await page.getByRole('radio', { name: a.smoker ? 'Yes' : 'No', exact: true }).check();
    await next();
    await page.getByRole('region', { name: 'What leaves your device' }).waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const hash = await page.getByTestId('receipt-hash').first().textContent({ timeout: 120000 });
    if (problems.length) throw new Error(problems.join('; '));
    return hash;
  } catch (e) {
    throw new Error(`${e.message}${problems.length ? ` (${problems.join('; ')})` : ''}`);
  } finally {
    await context.close();
  }
}

/**
 * Issue 22 §3: the tests the declared terms allow agree in every front end. R on the raw answers
 * is the oracle; on the release, `orthomask regress --terms` (an R formula over the manifest's
 * declared terms), the analyst view (to the digits it shows, and exactly in its JSON) and the
 * view's R and Python exports run as downloaded (R and statsmodels compute every test
 * themselves) all give R's numbers.
 */
async function exactTests(browser, services, releaseCsv, rawCsv) {
  await writeFile(join(out, 'r-tests.R'), R_TESTS);
  const r = Object.fromEntries(execFileSync('Rscript', [join(out, 'r-tests.R'), rawCsv], { encoding: 'utf8' })
    .trim().split('\n').map((l) => { const [k, v] = l.split(','); return [k, Number(v)]; }));
  const manifestPath = join(out, 'manifest.json');
  const formula = 'y ~ age + I(age^2) + income*smoker';
  const viaCli = (extra) => JSON.parse(execFileSync(cli, ['regress', '--input', releaseCsv, '--manifest', manifestPath, '--terms', formula, '--json', ...extra], { encoding: 'utf8' }));
  const reset = viaCli(['--test', 'reset']);
  const chow = viaCli(['--test', 'chow', '--group', 'smoker']);
  if (reset.coefficients.map((c) => c.name).join(',') !== ['(Intercept)', ...X].join(',')) throw new Error(`--terms fitted ${reset.coefficients.map((c) => c.name)}`);
  if (reset.test.added.join(',') !== 'age_sq') throw new Error(`--test reset added ${reset.test.added}`);
  if (chow.test.added.join(',') !== 'smoker,income_x_smoker') throw new Error(`--test chow added ${chow.test.added}`);
  for (const [what, ours, theirs] of [
    ['CLI RESET F', reset.test.f_statistic, r['reset.F']], ['CLI RESET p', reset.test.p_value, r['reset.p']],
    ['CLI Chow F', chow.test.f_statistic, r['chow.F']], ['CLI Chow p', chow.test.p_value, r['chow.p']],
    ['CLI AIC', reset.aic, r.aic], ['CLI BIC', reset.bic, r.bic], ['CLI log-likelihood', reset.log_likelihood, r.log_likelihood],
  ]) agree(theirs, ours, `${what}, R on the raw answers vs the release`);
  log(`orthomask regress --terms '${formula}': RESET F = ${reset.test.f_statistic.toPrecision(8)}, Chow F = ${chow.test.f_statistic.toPrecision(8)}, as R on the raw answers`);

  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  try {
    const base = `${services.collector}/api/surveys/${ID}`;
    await page.goto(`${services.collector}/#/analyze?data=${base}/release.csv&manifest=${base}/manifest.json&y=y&x=${X.join(',')}`);
    const table = page.getByTestId('declared-tests');
    await table.waitFor({ timeout: 60000 });
    const shown = await table.locator('tbody tr').evaluateAll((rows) => rows.map((tr) => ({
      test: tr.dataset.test,
      f: tr.querySelector('.f').textContent,
      fExact: Number(tr.querySelector('.f').dataset.exact),
      pExact: Number(tr.querySelector('.p').dataset.exact),
    })));
    if (shown.map((t) => t.test).join(',') !== 'reset,chow:smoker') throw new Error(`the view's declared tests: ${JSON.stringify(shown)}`);
    for (const [row, key] of [[shown[0], 'reset'], [shown[1], 'chow']]) {
      // To the last digit shown (six significant), and exactly behind it.
      if (Number(row.f) !== Number(r[`${key}.F`].toPrecision(6))) throw new Error(`the view shows ${key} F = ${row.f}, R ${r[`${key}.F`]}`);
      agree(r[`${key}.F`], row.fExact, `the view's ${key} F`);
      agree(r[`${key}.p`], row.pExact, `the view's ${key} p`);
    }
    const download = async (label) => {
      const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: label }).click()]);
      return readFile(await d.path(), 'utf8');
    };
    const viewJson = JSON.parse(await download('All results (JSON)')).exact_tests;
    const rScript = await download('R script');
    const pyScript = await download('Python script');
    await writeFile(join(out, 'analysis.R'), rScript);
    await writeFile(join(out, 'analysis.py'), pyScript);
    // The scripts run as exported (they read the release from the collector's address); then the
    // values they computed are printed at full precision.
    const fromR = JSON.parse(execFileSync('Rscript', ['--vanilla', '-e', [
      `source(${JSON.stringify(join(out, 'analysis.R'))})`,
      'v <- unlist(exact_tests)',
      'cat("{", paste(sprintf("\\"%s\\": %.17g", names(v), v), collapse = ", "), "}\\n", sep = "")',
    ].join('\n')], { encoding: 'utf8' }).trim().split('\n').pop());
    const python = process.env.ORTHOMASK_PYTHON ?? join(repo, 'target', 'py-test-venv', 'bin', 'python');
    const fromPy = JSON.parse(execFileSync(python, ['-c', [
      'import json, runpy',
      `g = runpy.run_path(${JSON.stringify(join(out, 'analysis.py'))})`,
      'flat = {}',
      'for k, v in g["exact_tests"].items():',
      '    if isinstance(v, dict):',
      '        flat.update({f"{k}.{i}": float(x) for i, x in v.items()})',
      '    elif isinstance(v, list):',
      '        flat.update({f"{k}{i + 1}": float(x) for i, x in enumerate(v)})',
      '    else:',
      '        flat[k] = float(v)',
      'print(json.dumps(flat))',
    ].join('\n')], { encoding: 'utf8' }).trim().split('\n').pop());
    // The view's values under the scripts' names.
    const want = { log_likelihood: viewJson.log_likelihood, aic: viewJson.aic, bic: viewJson.bic };
    viewJson.drop_tests.Ok.forEach((row, i) => { want[`drop_f${i + 1}`] = row.f; });
    for (const row of viewJson.vif.Ok) want[`vif.${row.name}`] = row.vif;
    for (const c of viewJson.residual_correlations) if (c.correlation !== null) want[`residual_correlations.${c.column}`] = c.correlation;
    viewJson.declared_tests.forEach((t) => {
      const key = t.Ok.test.kind === 'reset' ? 'reset' : `chow:${t.Ok.test.group}`;
      want[`${key}.F`] = t.Ok.f;
      want[`${key}.p`] = t.Ok.p;
    });
    for (const [tool, got] of [['R', fromR], ['Python', fromPy]]) {
      const missing = Object.keys(want).filter((k) => !(k in got));
      if (missing.length) throw new Error(`the ${tool} export computed no ${missing.join(', ')}: ${JSON.stringify(got)}`);
      for (const [k, v] of Object.entries(want)) agree(got[k], v, `${k}: the ${tool} export vs the view`);
    }
    agree(r['reset.F'], fromPy['reset.F'], 'RESET F: the Python export on the release vs R on the raw answers');
    agree(r.aic, fromPy.aic, "AIC: the Python export (R's convention) vs R on the raw answers");
    log(`the analyst view shows R's RESET and Chow tests to its six digits; its R and Python exports compute the same ${Object.keys(want).length} values`);
    // The audit view names the declared terms as the manifest records them (what --terms and the
    // analyst view read).
    await page.goto(`${services.collector}/#/audit?data=${base}/release.csv&manifest=${base}/manifest.json`);
    const statement = await page.locator('[data-statement="model terms"]').textContent({ timeout: 60000 });
    if (!statement.endsWith('exact on the release: age_sq = age^2, income_x_smoker = income*smoker')) throw new Error(`the audit view says ${JSON.stringify(statement)}`);
    if (problems.length) throw new Error(problems.join('; '));
    log('the audit view names the declared terms: age_sq = age^2, income_x_smoker = income*smoker');
  } finally {
    await context.close();
  }
}

async function main() {
  await withServices('terms', out, async (services, browser) => {
    const created = await api('POST', `${services.collector}/api/admin/surveys`, DRAFT, services.admin);
    if (created.status !== 201) throw new Error(`creating the survey: ${created.status} ${created.text}`);
    if (created.json.p1 !== 7) throw new Error(`p1 = ${created.json.p1}: the plan does not count the 2 terms (expected 4 + 2 + 1 = 7)`);
    log(`survey ${ID}: p1 = ${created.json.p1} (4 answers, 2 terms, QA), p2 = ${created.json.p2}, one cohort of ${DRAFT.cohort_size}`);
    const inv = await api('POST', `${services.collector}/api/admin/surveys/${ID}/invitations`, { count: ANSWERS.length }, services.admin);
    if (inv.status !== 201) throw new Error(`invitations: ${inv.status} ${inv.text}`);
    const links = inv.json.invitations.map((x) => x.participant_url);
    const rawCsv = join(out, 'raw.csv');
    await writeFile(rawCsv, `y,age,income,smoker\n${ANSWERS.map((a) => [a.y, a.age, a.income, a.smoker ? 1 : 0].join(',')).join('\n')}\n`);

    const hashes = [];
    for (let i = 0; i < ANSWERS.length; i += 3) {
      hashes.push(...await Promise.all(ANSWERS.slice(i, i + 3).map((a, j) => participate(browser, links[i + j], a))));
    }
    log(`${hashes.length} participants answered through the form in Chromium`);

    const closed = await api('POST', `${services.collector}/api/admin/surveys/${ID}/close`, {}, services.admin);
    if (closed.status !== 200) throw new Error(`closing: ${closed.status} ${closed.text}`);
    const release = await waitFor(async () => {
      const r = await api('GET', `${services.collector}/api/surveys/${ID}/release.csv`);
      if (r.status === 200) return r.text;
      const s = await api('GET', `${services.collector}/api/surveys/${ID}/status`, undefined, services.admin);
      if (s.json?.status === 'failed') throw new Error(`the survey failed: ${s.text}`);
      return null;
    }, 'the release', 180);
    const releaseCsv = join(out, 'release.csv');
    await writeFile(releaseCsv, release);
    const manifest = await api('GET', `${services.collector}/api/surveys/${ID}/manifest.json`);
    await writeFile(join(out, 'manifest.json'), manifest.text);
    if (manifest.json.n !== ANSWERS.length) throw new Error(`the release has ${manifest.json.n} records, ${ANSWERS.length} participants answered`);
    if (!manifest.json.qa.passed) throw new Error('the QA check failed');

    const [header, ...lines] = release.trim().split('\n');
    const columns = header.split(',');
    for (const c of ['y', 'age', 'income', 'smoker', 'age_sq', 'income_x_smoker']) {
      if (!columns.includes(c)) throw new Error(`release.csv has no column ${c}: ${header}`);
    }
    if (lines.length !== ANSWERS.length) throw new Error(`release.csv has ${lines.length} rows, expected ${ANSWERS.length}`);
    // The release is masked: its age column is not the typed ages.
    const ages = lines.map((l) => Number(l.split(',')[columns.indexOf('age')]));
    if (ages.some((v, k) => v === Number(ANSWERS[k].age))) throw new Error(`release.csv's age column holds a raw age: ${ages}`);
    log(`release: n = ${lines.length}, columns ${header}`);

    const ours = JSON.parse(execFileSync(cli, ['regress', '--input', releaseCsv, '--y', 'y', '--x', X.join(','), '--json'], { encoding: 'utf8' }));
    await writeFile(join(out, 'r.R'), R_FIT);
    const rTable = execFileSync('Rscript', [join(out, 'r.R'), rawCsv], { encoding: 'utf8' });
    await writeFile(join(out, 'r.csv'), rTable);
    const inR = new Map(rTable.trim().split('\n').slice(1).map((l) => {
      const [name, estimate, se] = l.split(',');
      return [name, { estimate: Number(estimate), std_error: Number(se) }];
    }));
    const names = ours.coefficients.map((c) => c.name);
    if (names.join(',') !== Object.keys(IN_R).join(',')) throw new Error(`orthomask regress fitted ${names.join(',')}`);
    if (inR.size !== names.length) throw new Error(`R fitted ${[...inR.keys()].join(',')}`);
    // TOLERANCE (lib.mjs, 1e-9 relative) is issue 22's bound. Why it holds with a wide margin:
    // the release is the raw data to about 1e-14 of each column's range (range scaling), this
    // design (age over 19–86 with age², income × smoker) has condition 27 once its columns are
    // standardised (R's kappa(scale(X[, -1]), exact = TRUE); 7·10⁴ unscaled), and R's QR fit is
    // printed to 17 digits. Measured: 1e-13. A term computed wrongly on the device, or one typed
    // answer that differs from the raw CSV (one age 19 → 20 moves the intercept by 17%), fails it.
    let worst = 0;
    for (const c of ours.coefficients) {
      const r = inR.get(IN_R[c.name]);
      if (!r) throw new Error(`R has no coefficient ${IN_R[c.name]} (for ${c.name})`);
      worst = Math.max(worst,
        agree(r.estimate, c.estimate, `${c.name} estimate, R on the raw answers vs the release`),
        agree(r.std_error, c.std_error, `${c.name} standard error, R on the raw answers vs the release`));
    }
    log(`y ~ age + age_sq + income + smoker + income_x_smoker on the release equals R's lm(y ~ age + I(age^2) + income*smoker) on the raw answers (largest relative difference ${worst.toExponential(2)}, tolerance ${TOLERANCE})`);
    for (const c of ours.coefficients) log(`  ${c.name.padEnd(16)} ${c.estimate.toPrecision(12).padStart(20)}  R ${inR.get(IN_R[c.name]).estimate.toPrecision(12)}`);

    await exactTests(browser, services, releaseCsv, rawCsv);
  });
  log(`passed; files in ${out}`);
}

run('terms', main);
