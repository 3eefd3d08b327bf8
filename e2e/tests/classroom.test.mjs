// The classroom: the default design is safe (condition (3.7) holds); the four steps show each
// party's view with non-blank heatmaps; Figure 2's lines agree; Table 6 comes out of the masked
// columns; p < n runs the Appendix A attack; collusion returns the raw data; the paper mode
// reproduces eq. (1); the DP chart is drawn; a large n runs in the worker with a progress bar
// while the page answers a click (observed through the worker's messages, never timed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setup, screenshot, canvasVariance, startHeldJob, releaseWorker, workerLog } from '../lib.mjs';

async function setNumber(page, label, value) {
  const input = page.getByLabel(label);
  await input.fill(String(value));
  await input.press('Enter');
  await input.blur();
}

test('the default classroom walks through the four steps with each party\'s view', async () => {
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/classroom`);
    const condition = s.page.getByTestId('condition');
    await condition.waitFor();
    assert.match(await condition.textContent(), /✓ Condition \(3\.7\) holds/);
    assert.match(await s.page.getByTestId('keys-label').textContent(), /teaching keys 535, 536, 537 — guessable/);
    assert.match(await s.page.locator('table.who-knows').textContent(), /masking service provider.*A₂/s);
    const steps = [['Step 2: participants', 'heat-x'], ['Step 3: provider', 'heat-xb'], ['Step 4: collector', 'heat-release']];
    for (const [tab, plot] of steps) {
      await s.page.getByRole('tab', { name: tab }).click();
      await s.page.locator(`canvas[data-plot="${plot}"]`).waitFor();
      const v = await canvasVariance(s.page, `canvas[data-plot="${plot}"]`);
      assert.ok(v > 100, `${plot} heatmap looks blank (${v})`);
    }
    assert.ok(await canvasVariance(s.page, 'canvas[data-plot="heat-a2x"]') > 100);
    // The step tabs from the keyboard: only the selected tab is in the tab order; arrow keys,
    // Home and End select and focus another.
    assert.deepEqual(await s.page.getByRole('tab').evaluateAll((tabs) => tabs.map((t) => t.tabIndex)), [-1, -1, -1, 0]);
    await s.page.getByRole('tab', { name: 'Step 4: collector' }).focus();
    await s.page.keyboard.press('ArrowRight');
    const focused = () => s.page.evaluate(() => document.activeElement?.textContent);
    assert.equal(await focused(), 'Step 1: plan');
    assert.equal(await s.page.getByRole('tab', { name: 'Step 1: plan' }).getAttribute('aria-selected'), 'true');
    await s.page.keyboard.press('End');
    assert.equal(await focused(), 'Step 4: collector');
    await s.page.locator('canvas[data-plot="heat-release"]').waitFor();
    // Why a release has no residual plots (issue 22 §2): the raw and released Q–Q plots of a
    // skewed survey, both drawn, and the numbers that tell them apart.
    const lesson = s.page.getByTestId('residual-lesson');
    assert.match(await lesson.textContent(), /skewness \d+\.\d\).*look normal \(skewness -?0\.\d\d\)/s);
    for (const plot of ['lesson-qq-raw', 'lesson-qq-release']) {
      assert.ok(await canvasVariance(s.page, `canvas[data-plot="${plot}"]`) > 100, `${plot} looks blank`);
    }
    const equations = await s.page.locator('.figure2 [data-testid=equation]').allTextContents();
    assert.equal(equations.length, 2);
    assert.equal(equations[0], equations[1], 'Figure 2: the same line on the original and the release');
    for (const k of [0, 1]) assert.ok(await canvasVariance(s.page, `canvas[data-plot="classroom-figure2-${k}"]`) > 100);
    // Table 6 of the paper from the masked columns.
    assert.match(await s.page.getByTestId('table6').textContent(), /V₁ᵀV₂ = 6, V₁ᵀV₁ = 12, V₂ᵀV₂ = 9, n = 20/);
    assert.match(await s.page.getByTestId('attack-note').textContent(), /the attack learns nothing/);
    // The DP chart (seed 004 Table 1).
    await s.page.locator('canvas[data-plot="dp"]').waitFor();
    assert.ok(await canvasVariance(s.page, 'canvas[data-plot="dp"]') > 100);
    assert.match(await s.page.locator('table.dp-table').textContent(), /23\.3\s*25\.4\s*9\.5/);
    await screenshot(s.page, 'classroom-default');
    // Collusion: the provider plus one participant's B give back the raw rows.
    await s.page.getByLabel(/The provider colludes with one participant/).check();
    const colluded = (await s.page.getByTestId('collusion').textContent()).match(/largest difference from the raw data ([0-9.e-]+)/);
    assert.ok(colluded && Number.parseFloat(colluded[1]) < 1e-8, `collusion recovers the raw rows: ${colluded?.[1]}`);
    // New random keys: labelled, and the run changes.
    const before = await s.page.locator('.view-block').last().textContent();
    await s.page.getByRole('button', { name: 'New random keys' }).click();
    await s.page.getByTestId('keys-label').filter({ hasText: 'fresh random 256-bit keys' }).waitFor();
    await s.page.waitForFunction((old) => document.querySelector('.view-block:last-of-type')?.textContent !== old, before);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('p < n turns the indicator off and the Appendix A attack narrows the sensitive columns down', async () => {
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/classroom`);
    await s.page.getByTestId('condition').waitFor();
    await setNumber(s.page, 'Noise columns p₂', 5);
    await s.page.getByTestId('condition').filter({ hasText: '✗ Condition (3.7) does not hold' }).waitFor();
    assert.match(await s.page.getByTestId('condition').textContent(), /Would be refused: unsafe design: the right mask has p = 14 columns but a cohort has n = 20/);
    const attack = s.page.getByTestId('attack');
    await attack.locator('.attack-column').first().waitFor();
    const text = await attack.textContent();
    assert.match(text, /Looking for IH/);
    assert.match(text, /rank 14 of 20 rows: 6 linear constraints/);
    assert.match(text, /the true one is among them/);
    // The page shows what the attack found: the surviving 0/1 columns (up to eight), and the
    // column itself when a single one survives.
    const first = attack.locator('.attack-column').first();
    const truth = await first.locator('tr').first().locator('code').textContent();
    assert.match(truth, /^[01]{20}$/);
    const survivors = Number((await first.textContent()).match(/Only (\d+) of the 2\^20/)[1]);
    const shown = await first.locator('tr th', { hasText: /^candidate \d+$/ }).count();
    assert.equal(shown, Math.min(survivors, 8));
    for (const code of await first.locator('tr code').allTextContents()) assert.match(code, /^[01]{20}$/);
    if (survivors === 1) assert.equal(await first.getByTestId('recovered').textContent(), truth);
    await screenshot(s.page, 'classroom-attack');
    // The paper's own design: eq. (1) appears as B.
    await s.page.locator('#method').selectOption('paper');
    await s.page.getByRole('tab', { name: 'Step 1: plan' }).click();
    const b = s.page.locator('table.matrix', { hasText: 'B (the right mask)' });
    await b.waitFor();
    assert.equal(await b.locator('tbody tr').first().locator('td').first().textContent(), '0.3622');
    assert.match(await attack.textContent(), /rank 9 of 20 rows: 11 linear constraints/);
    await screenshot(s.page, 'classroom-paper');
  } finally {
    await s.close();
  }
});

test('a large classroom runs in the worker with a progress bar and the page answers a click meanwhile', async () => {
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/classroom`);
    await s.page.getByTestId('condition').waitFor();
    // Typed one after another while jobs run: no value may be lost to a re-render.
    await setNumber(s.page, 'Per cohort (0 = all)', 100);
    await setNumber(s.page, 'Noise columns p₂', 800);
    await setNumber(s.page, 'Noise σ', 50000);
    await s.page.locator('.classroom').filter({ hasText: 'padded with p₂ = 800 noise columns' }).waitFor();
    await s.page.getByTestId('condition').filter({ hasText: 'σ = 50000' }).waitFor();
    await s.page.waitForFunction(() => !document.querySelector('.progress progress'));
    // The job goes to the worker (its request is a message to it) and its result is held there.
    const id = await startHeldJob(s.page, 'Classroom', () => setNumber(s.page, 'Participants n', 1500));
    await s.page.locator('.progress progress').waitFor();
    // While the job is outstanding the page answers a click: the tab's panel appears while the
    // progress bar still waits for the held result.
    await s.page.getByRole('tab', { name: 'Step 2: participants' }).click();
    await s.page.getByRole('heading', { name: /Step 2/ }).waitFor();
    assert.equal(await s.page.locator('.progress progress').count(), 1, 'the job is still outstanding');
    await s.page.getByRole('tab', { name: 'Step 1: plan' }).click();
    // The result comes back from the worker, as a message, and only then is shown.
    await releaseWorker(s.page);
    await s.page.locator('.classroom').filter({ hasText: '1500 participants in 15 cohort' }).waitFor();
    const log = await workerLog(s.page);
    assert.ok(log.indexOf(`sent:Classroom#${id}`) < log.indexOf(`received:Done#${id}`), JSON.stringify(log));
    await screenshot(s.page, 'classroom-large');
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});
