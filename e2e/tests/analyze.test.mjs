// The analyst view: a deep link runs the regression on load and prints coefficients equal to
// `orthomask regress --json` on the same file; Figure 2 side by side with equal equations;
// residual and Q-Q plots of the original data are drawn (non-blank canvases), and a release alone
// gets none, only the line saying why; exports; bad files get one line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setup, screenshot, canvasVariance, fixtures, startHeldJob, releaseWorker, workerLog } from '../lib.mjs';

const RELATIVE = 1e-9;

test('a deep-linked analysis shows the CLI\'s coefficients as text, both Figure 2 panels and diagnostics', async () => {
  const cli = JSON.parse(await readFile(join(fixtures, 'cli-regress.json'), 'utf8'));
  const s = await setup();
  try {
    const link = '#/analyze?data=fixtures/release.csv&y=ADL&x=BBS,Age&original=fixtures/leaps_table2.csv&manifest=fixtures/manifest.json';
    await s.page.goto(`${s.server.base}/${link}`);
    const table = s.page.getByTestId('linear-coefficients');
    await table.waitFor();
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({
      name: tr.dataset.term,
      estimate: Number(tr.querySelector('.estimate').dataset.exact),
      std_error: Number(tr.querySelector('.std-error').dataset.exact),
    })));
    assert.deepEqual(rows.map((r) => r.name), cli.coefficients.map((c) => c.name));
    rows.forEach((r, i) => {
      const c = cli.coefficients[i];
      assert.ok(Math.abs(r.estimate - c.estimate) <= RELATIVE * Math.abs(c.estimate), `${r.name}: ${r.estimate} vs CLI ${c.estimate}`);
      assert.ok(Math.abs(r.std_error - c.std_error) <= RELATIVE * Math.abs(c.std_error), `${r.name} s.e.`);
    });
    // The coefficients also appear as plain text on the page.
    const text = await s.page.getByTestId('coefficients-text').textContent();
    for (const c of cli.coefficients) assert.ok(text.includes(c.name), c.name);
    // Figure 2: original and masked panels, the same fitted equation under each.
    const equations = await s.page.locator('.figure2 [data-testid=equation]').allTextContents();
    assert.equal(equations.length, 2);
    assert.equal(equations[0], equations[1]);
    for (const name of ['figure2-0', 'figure2-1', 'residuals', 'qq']) {
      const v = await canvasVariance(s.page, `canvas[data-plot="${name}"]`);
      assert.ok(v > 100, `${name} looks blank (pixel variance ${v})`);
    }
    // The residual plots are the original data's (issue 22 §2), and say so.
    assert.match(await s.page.getByTestId('row-diagnostics-source').textContent(), /fitted on the original data/);
    // Binary columns of the release give integer contingency tables (Group × MIF of Table 6).
    const groupMif = s.page.locator('table.counts[data-rows="Group"][data-columns="MIF"]');
    assert.deepEqual((await groupMif.locator('tbody tr').first().locator('td').allTextContents()).slice(0, 2), ['6', '6']);
    // Counts print as integers (never -0 or 6.0000001), and with an expected count of 3.6 the
    // table gives Fisher's exact test — R's fisher.test(matrix(c(6, 3, 6, 5), 2)): p = 0.670,
    // odds ratio 1.624 (95 % CI 0.1969 to 15.65; the exact roots, which R's uniroot approximates).
    for (const text of await s.page.locator('table.counts td').allTextContents()) {
      assert.match(text, /^(0|[1-9][0-9]*)$/, `a count printed as ${text}`);
    }
    const caption = await groupMif.locator('caption').textContent();
    assert.match(caption, /Fisher's exact test p = 0\.670, odds ratio 1\.624 \(95 % CI 0\.1969 to 15\.65\)/);
    assert.match(caption, /expected count is 3\.60 \(below 5\)/);
    assert.match(await s.page.locator('.audit-summary').textContent(), /passed/);
    await screenshot(s.page, 'analyze-deep-link');
    // Exports: the coefficient CSV and the R and Python snippets.
    const [csv] = await Promise.all([s.page.waitForEvent('download'), s.page.getByRole('button', { name: 'Coefficients (CSV)' }).click()]);
    const csvText = await readFile(await csv.path(), 'utf8');
    assert.match(csvText, /^term,estimate,std_error,t,p,ci_low,ci_high\n\(Intercept\),/);
    assert.match(await s.page.getByTestId('r-snippet').textContent(), /lm\(ADL ~ BBS \+ Age, data = d\)/);
    assert.match(await s.page.getByTestId('python-snippet').textContent(), /smf\.ols\("ADL ~ BBS \+ Age", data=d\)/);
    // The JSON export carries the CLI's coefficients; the R script names the same model; the
    // Python script, run with pandas and statsmodels on the same file, reproduces them.
    const download = async (name) => {
      const [d] = await Promise.all([s.page.waitForEvent('download'), s.page.getByRole('button', { name }).click()]);
      return readFile(await d.path(), 'utf8');
    };
    const exported = JSON.parse(await download('All results (JSON)'));
    exported.linear.coefficients.forEach((c, i) => {
      const want = cli.coefficients[i];
      assert.ok(Math.abs(c.estimate - want.estimate) <= RELATIVE * Math.abs(want.estimate), `JSON ${c.name}`);
    });
    assert.match(await download('R script'), /lm\(ADL ~ BBS \+ Age, data = d\)/);
    const script = await download('Python script');
    const python = process.env.ORTHOMASK_PYTHON;
    assert.ok(python, 'ORTHOMASK_PYTHON must name a Python with pandas and statsmodels (scripts/test-web.sh sets it)');
    const work = await mkdtemp(join(tmpdir(), 'orthomask-py-'));
    const dataFile = script.match(/pd\.read_csv\("([^"]+)"\)/)[1];
    await mkdir(dirname(join(work, dataFile)), { recursive: true });
    await copyFile(join(fixtures, 'release.csv'), join(work, dataFile));
    await writeFile(join(work, 'analysis.py'), script);
    const out = execFileSync(python, ['-c', 'exec(open("analysis.py").read())\nimport json\nprint(json.dumps({"params": list(fit.params), "bse": list(fit.bse)}))'], { cwd: work, encoding: 'utf8' });
    const statsmodels = JSON.parse(out.trim().split('\n').at(-1));
    cli.coefficients.forEach((c, i) => {
      assert.ok(Math.abs(statsmodels.params[i] - c.estimate) <= RELATIVE * Math.abs(c.estimate), `Python ${c.name}: ${statsmodels.params[i]} vs ${c.estimate}`);
      assert.ok(Math.abs(statsmodels.bse[i] - c.std_error) <= RELATIVE * Math.abs(c.std_error), `Python ${c.name} s.e.`);
    });
    // Changing the model re-runs it: drop Age.
    await s.page.getByLabel('Age', { exact: true }).uncheck();
    await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=linear-coefficients] tbody tr').length === 2);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

// The R export is run, not only read: on a second-method release (XB₁B₂ keeps the 0/1 response
// MIF and the treatment Group, so both lm and glm apply), the downloaded script runs under Rscript
// and its lm and glm coefficients and standard errors equal `orthomask regress --json` and
// `orthomask logit --json` on the same file.
test('the exported R script, run with Rscript, reproduces the CLI\'s lm and glm', async () => {
  const want = {
    lm: JSON.parse(await readFile(join(fixtures, 'cli-regress-second.json'), 'utf8')).coefficients,
    glm: JSON.parse(await readFile(join(fixtures, 'cli-logit-second.json'), 'utf8')).coefficients,
  };
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/analyze?data=fixtures/release-second.csv&y=MIF&x=Group,Age,BBS,ADL`);
    await s.page.getByTestId('linear-coefficients').waitFor();
    await s.page.getByTestId('logistic-coefficients').waitFor();
    const [d] = await Promise.all([s.page.waitForEvent('download'), s.page.getByRole('button', { name: 'R script' }).click()]);
    const script = await readFile(await d.path(), 'utf8');
    assert.match(script, /glm\(MIF ~ Group \+ Age \+ BBS \+ ADL, family = binomial/);
    const work = await mkdtemp(join(tmpdir(), 'orthomask-r-'));
    const dataFile = script.match(/read\.csv\("([^"]+)"/)[1];
    await mkdir(dirname(join(work, dataFile)), { recursive: true });
    await copyFile(join(fixtures, 'release-second.csv'), join(work, dataFile));
    await writeFile(join(work, 'analysis.R'), script);
    // Run the script as exported, then print both coefficient tables at full precision.
    const report = [
      'source("analysis.R")',
      'rows <- function(m) paste0("[", paste(sprintf("{\\"name\\":\\"%s\\",\\"estimate\\":%.17g,\\"std_error\\":%.17g}", rownames(m), m[, 1], m[, 2]), collapse = ","), "]")',
      'cat("ORTHOMASK-JSON {\\"lm\\":", rows(coef(summary(fit))), ",\\"glm\\":", rows(coef(summary(logit))), "}\\n", sep = "")',
    ].join('\n');
    const rscript = process.env.ORTHOMASK_RSCRIPT ?? 'Rscript';
    const out = execFileSync(rscript, ['--vanilla', '-e', report], { cwd: work, encoding: 'utf8' });
    const line = out.split('\n').find((l) => l.startsWith('ORTHOMASK-JSON '));
    assert.ok(line, `Rscript printed no result:\n${out}`);
    const r = JSON.parse(line.slice('ORTHOMASK-JSON '.length));
    for (const model of ['lm', 'glm']) {
      assert.deepEqual(r[model].map((c) => c.name), want[model].map((c) => c.name), model);
      r[model].forEach((c, i) => {
        const w = want[model][i];
        assert.ok(Math.abs(c.estimate - w.estimate) <= RELATIVE * Math.abs(w.estimate), `R ${model} ${c.name}: ${c.estimate} vs CLI ${w.estimate}`);
        assert.ok(Math.abs(c.std_error - w.std_error) <= RELATIVE * Math.abs(w.std_error), `R ${model} ${c.name} s.e.: ${c.std_error} vs CLI ${w.std_error}`);
      });
    }
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('files load by picker and drag and drop; malformed CSV gets one line, not a crash', async () => {
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/analyze`);
    await s.page.locator('#data-file').setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\n3,four\n') });
    const error = s.page.getByRole('alert').filter({ hasText: 'bad.csv:3:2: expected a number, found "four"' });
    await error.waitFor();
    // Drop a good file on the drop zone.
    const csv = await readFile(join(fixtures, 'leaps_table5_released.csv'), 'utf8');
    const dataTransfer = await s.page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'table5.csv', { type: 'text/csv' }));
      return dt;
    }, csv);
    await s.page.locator('.drop-zone').first().dispatchEvent('drop', { dataTransfer });
    await s.page.getByTestId('linear-coefficients').waitFor();
    assert.match(await s.page.locator('.summary').textContent(), /table5\.csv: 20 records, 9 columns, printed to 2 decimals/);
    // NaN in a file: one line naming the cell.
    await s.page.locator('#data-file').setInputFiles({ name: 'nan.csv', mimeType: 'text/csv', buffer: Buffer.from('a,b\n1,2\nNaN,3\n') });
    await s.page.getByRole('alert').filter({ hasText: 'nan.csv:3:1' }).waitFor();
    await screenshot(s.page, 'analyze-bad-file');
    // Load from an address, typed into the form: a missing file is one line, a real one loads.
    await s.page.locator('#data-url').fill(`${s.server.base}/fixtures/nowhere.csv`);
    await s.page.locator('#data-url').press('Enter');
    await s.page.getByRole('alert').filter({ hasText: 'nowhere.csv' }).waitFor();
    await s.page.locator('#data-url').fill(`${s.server.base}/fixtures/release.csv`);
    await s.page.locator('form.url-form').first().getByRole('button', { name: 'Load' }).click();
    await s.page.locator('.summary').filter({ hasText: /release\.csv: 20 records/ }).waitFor();
    // A release alone: no residual or Q–Q plot is presented, one line says why (issue 22 §2).
    const why = await s.page.getByTestId('no-row-diagnostics').textContent();
    assert.match(why, /^Residual and Q–Q plots, leverage, Cook's distance and quantiles are per-row diagnostics, which a masked release cannot give/);
    assert.equal(await s.page.locator('canvas[data-plot="qq"], canvas[data-plot="residuals"]').count(), 0);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('a large release is analysed in the worker with a progress bar while the page answers typing', async () => {
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/analyze`);
    await s.page.locator('#data-file').waitFor();
    // 100 000 records × 4 columns (about 4 MB of CSV): y = 1 + 2a − b + noise.
    let seed = 12345;
    const u = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    const lines = ['y,a,b,c'];
    for (let i = 0; i < 100000; i += 1) {
      const [a, b, c] = [u() * 10, u() * 5, u()];
      lines.push(`${(1 + 2 * a - b + (u() - 0.5)).toFixed(9)},${a.toFixed(9)},${b.toFixed(9)},${c.toFixed(9)}`);
    }
    // From a file on disk: Playwright hands a path to Chromium directly, where an in-memory
    // buffer would be decoded by Playwright's own script on the page's main thread.
    const file = join(await mkdtemp(join(tmpdir(), 'orthomask-large-')), 'large.csv');
    await writeFile(file, lines.join('\n') + '\n');
    // The analysis goes to the worker as a message, and its result is held there.
    const id = await startHeldJob(s.page, 'Analyze', () => s.page.locator('#data-file').setInputFiles(file));
    await s.page.locator('.progress progress').waitFor();
    // While the job is outstanding the page takes typing: the field shows what was typed while
    // the progress bar still waits for the held result.
    await s.page.locator('#data-url').fill('typed while the worker computes');
    assert.equal(await s.page.locator('#data-url').inputValue(), 'typed while the worker computes');
    assert.equal(await s.page.locator('.progress progress').count(), 1, 'the job is still outstanding');
    // The result comes back from the worker, as a message, and only then is shown.
    await releaseWorker(s.page);
    await s.page.locator('.summary').filter({ hasText: /large\.csv: 100000 records, 4 columns/ }).waitFor();
    await s.page.getByTestId('linear-coefficients').waitFor();
    const log = await workerLog(s.page);
    assert.ok(log.indexOf(`sent:Analyze#${id}`) < log.indexOf(`received:Done#${id}`), JSON.stringify(log));
    const estimates = await s.page.getByTestId('linear-coefficients').locator('tbody tr')
      .evaluateAll((trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.term, Number(tr.querySelector('.estimate').dataset.exact)])));
    // The default model is y on the first other column; b and c are independent of a.
    assert.ok(Math.abs(estimates.a - 2) < 0.01, JSON.stringify(estimates));
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});
