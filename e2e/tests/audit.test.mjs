// The audit view: checks run in the browser with pass / warn / fail and their numbers; a
// tampered release fails; the report prints cleanly (no navigation, no buttons).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setup, screenshot, artifacts, fixtures } from '../lib.mjs';

test('a release and its manifest pass the audit, and the report prints cleanly', async () => {
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/audit?data=fixtures/release.csv&manifest=fixtures/manifest.json`);
    const overall = s.page.getByTestId('overall');
    await overall.waitFor();
    assert.match(await overall.textContent(), /^Overall: (PASS|WARN) — \d+ passed/);
    const ids = await s.page.locator('tr[data-check]').evaluateAll((rows) => rows.map((r) => r.dataset.check));
    for (const id of ['qa_column', 'precision']) assert.ok(ids.includes(id), `${id} in ${ids}`);
    assert.ok(ids.length >= 5);
    assert.equal(await s.page.locator('tr.fail').count(), 0);
    await screenshot(s.page, 'audit');
    await s.page.emulateMedia({ media: 'print' });
    assert.equal(await s.page.locator('nav.top').isVisible(), false);
    assert.equal(await s.page.getByRole('button', { name: 'Print' }).isVisible(), false);
    assert.equal(await s.page.locator('.file-picker').first().isVisible(), false);
    assert.ok(await s.page.getByTestId('audit-report').isVisible());
    await s.page.pdf({ path: join(artifacts, 'audit-print.pdf'), format: 'A4' });
    await screenshot(s.page, 'audit-print');
  } finally {
    await s.close();
  }
});

test('a tampered release fails the audit with the numbers behind it', async () => {
  const s = await setup();
  try {
    const csv = (await readFile(join(fixtures, 'release.csv'), 'utf8')).split('\n');
    const cells = csv[3].split(',');
    cells[3] = String(Number(cells[3]) + 5); // change one released Age
    csv[3] = cells.join(',');
    await s.page.goto(`${s.server.base}/#/audit?manifest=fixtures/manifest.json`);
    await s.page.locator('#audit-data-file').setInputFiles({ name: 'tampered.csv', mimeType: 'text/csv', buffer: Buffer.from(csv.join('\n')) });
    const overall = s.page.getByTestId('overall');
    await overall.waitFor();
    assert.match(await overall.textContent(), /^Overall: FAIL/);
    const failing = await s.page.locator('tr.fail').allTextContents();
    assert.ok(failing.some((t) => /mean|cross/i.test(t)), failing.join(' | '));
    await screenshot(s.page, 'audit-tampered');
  } finally {
    await s.close();
  }
});
