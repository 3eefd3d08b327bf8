// Issue 29 §2: a release opened with its data package shows its contingency tables with the
// questions' labels, and the exported R and Python scripts, run with Rscript and pandas, print the
// same labelled tables. The oracle is the answers themselves (e2e/fixtures/habits-answers.csv,
// which `orthomask survey code` coded and `orthomask pipeline --survey` released): counted here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setup, screenshot, fixtures } from '../lib.mjs';

const ROWS = ['yes', 'no'];
const COLUMNS = ['Never', 'Monthly', 'Weekly', 'Daily'];

/** smokes × drinks counted from the answers as given. */
async function counted() {
  const [header, ...lines] = (await readFile(join(fixtures, 'habits-answers.csv'), 'utf8')).trim().split('\n');
  const names = header.split(',');
  const at = (name) => names.indexOf(name);
  const counts = ROWS.map(() => COLUMNS.map(() => 0));
  for (const line of lines) {
    const cells = line.split(',');
    counts[ROWS.indexOf(cells[at('smokes')])][COLUMNS.indexOf(cells[at('drinks')])] += 1;
  }
  return counts;
}

/** Put the release and its package where the exported script reads them (relative to `work`). */
async function place(work, script, pattern) {
  for (const [file, source] of [[script.match(pattern.data)[1], 'release.csv'], [script.match(pattern.package)[1], 'datapackage.json']]) {
    await mkdir(dirname(join(work, file)), { recursive: true });
    await copyFile(join(fixtures, 'habits', source), join(work, file));
  }
}

test('a release with its data package: labelled tables on the page, in R and in pandas', async () => {
  const want = await counted();
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/analyze?data=fixtures/habits/release.csv&package=fixtures/habits/datapackage.json`);
    const table = s.page.locator('table.counts[data-rows="smokes"][data-columns="drinks"]');
    await table.waitFor({ timeout: 60000 });
    await s.page.getByTestId('labelled-tables').waitFor();
    const headers = await table.locator('thead th[scope=col]').allTextContents();
    assert.deepEqual(headers, [...COLUMNS.map((c) => `drinks = ${c}`), 'total']);
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    ROWS.forEach((label, i) => {
      assert.equal(rows[i][0], `smokes = ${label}`);
      assert.deepEqual(rows[i].slice(1, 1 + COLUMNS.length).map(Number), want[i], `page row ${label}`);
    });
    await screenshot(s.page, 'analyze-labelled-tables');
    const download = async (name) => {
      const [d] = await Promise.all([s.page.waitForEvent('download'), s.page.getByRole('button', { name }).click()]);
      return readFile(await d.path(), 'utf8');
    };

    // Python: the table's index and columns are pandas Categoricals of the labels.
    const py = await download('Python script');
    const pyWork = await mkdtemp(join(tmpdir(), 'orthomask-labels-py-'));
    await place(pyWork, py, { data: /pd\.read_csv\("([^"]+)"\)/, package: /read_text\("([^"]+)"\)\)/ });
    await writeFile(join(pyWork, 'analysis.py'), py);
    const python = process.env.ORTHOMASK_PYTHON;
    assert.ok(python, 'ORTHOMASK_PYTHON must name a Python with pandas (scripts/test-web.sh sets it)');
    const pyOut = execFileSync(python, ['-c', [
      'exec(open("analysis.py").read())',
      't = labelled_table("smokes", "drinks")',
      'assert isinstance(t.index, pd.CategoricalIndex) and isinstance(t.columns, pd.CategoricalIndex)',
      'print("ORTHOMASK-JSON " + json.dumps({"rows": list(map(str, t.index)), "columns": list(map(str, t.columns)), "counts": t.to_numpy().tolist()}))',
    ].join('\n')], { cwd: pyWork, encoding: 'utf8' });
    // R: read with jsonlite; the table's dimnames are the labels.
    const r = await download('R script');
    const rWork = await mkdtemp(join(tmpdir(), 'orthomask-labels-r-'));
    await place(rWork, r, { data: /read\.csv\("([^"]+)"/, package: /fromJSON\("([^"]+)"/ });
    await writeFile(join(rWork, 'analysis.R'), r);
    const rOut = execFileSync(process.env.ORTHOMASK_RSCRIPT ?? 'Rscript', ['--vanilla', '-e', [
      'source("analysis.R")',
      't <- labelled_table("smokes", "drinks")',
      'cat("ORTHOMASK-JSON", toJSON(list(rows = dimnames(t)[[1]], columns = dimnames(t)[[2]], counts = matrix(as.integer(t), nrow(t)))), "\\n")',
    ].join('\n')], { cwd: rWork, encoding: 'utf8' });
    for (const [who, out] of [['Python', pyOut], ['R', rOut]]) {
      const line = out.split('\n').find((l) => l.startsWith('ORTHOMASK-JSON '));
      assert.ok(line, `${who} printed no table:\n${out}`);
      const got = JSON.parse(line.slice('ORTHOMASK-JSON '.length));
      assert.deepEqual(got.rows, ROWS, `${who} rows`);
      assert.deepEqual(got.columns, COLUMNS, `${who} columns`);
      assert.deepEqual(got.counts, want, `${who} counts`);
    }
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});
