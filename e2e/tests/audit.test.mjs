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
    // What the manifest states but the numbers cannot check is shown as stated (issue 21 §3–§4).
    const stated = s.page.getByTestId('audit-statements');
    assert.match(await stated.locator('[data-statement=obfuscation]').textContent(), /prior restricted to Stab\(F\)·X₁/);
    assert.match(await stated.locator('[data-statement=accuracy]').textContent(), /expected to cost about [0-9.]+ significant digits .*not a bound/);
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

// Issue 10 §5: a participant's saved receipt checked against the release's manifest with the
// receipt list the service published. The list, its RFC 6962 root and the manifest's
// `receipt_roots` entry are built here the way the services build them.
test('a saved receipt is checked against the release: in the list passes, absent fails with the reason', async () => {
  const { createHash } = await import('node:crypto');
  const sha = (...parts) => createHash('sha256').update(Buffer.concat(parts)).digest();
  const leaf = (hex) => sha(Buffer.from([0]), Buffer.from(hex, 'hex'));
  const node = (l, r) => sha(Buffer.from([1]), l, r);
  const hashes = ['a', 'b', 'c'].map((x) => createHash('sha256').update(x).digest('hex')).sort();
  // RFC 6962 over three leaves: MTH = node(node(l0, l1), l2).
  const root = node(node(leaf(hashes[0]), leaf(hashes[1])), leaf(hashes[2])).toString('hex');
  const service = 'http://msp.test/api/surveys/leaps/uploads';
  const manifest = JSON.parse(await readFile(join(fixtures, 'manifest.json'), 'utf8'));
  manifest.receipt_roots = [{ cohort: 0, service, count: 3, merkle_root: root }];
  const list = { survey: 'leaps', cohort: 0, closed_at: null, count: 3, merkle_root: root, upload_hashes: hashes };
  const receiptFile = (hash) => JSON.stringify({ orthomask_receipt: [{ service, survey: 'leaps', cohort: 0, upload_hash: hash, received_at: '2026-01-01T00:00:00Z' }] });
  const json = (name, value) => ({ name, mimeType: 'application/json', buffer: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)) });
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/audit`);
    await s.page.locator('#audit-manifest-file').setInputFiles(json('manifest.json', manifest));
    await s.page.locator('#audit-evidence-file').setInputFiles(json('list.json', list));
    await s.page.locator('#audit-receipt-file').setInputFiles(json('receipt.json', receiptFile(hashes[1])));
    const overall = s.page.getByTestId('receipt-overall');
    await overall.waitFor();
    assert.match(await overall.textContent(), /^Receipts: PASS — 1 of 1 in the release/);
    assert.match(await s.page.locator(`tr[data-receipt="${hashes[1]}"]`).textContent(), /among its 3 uploads/);
    await screenshot(s.page, 'audit-receipt');

    const absent = createHash('sha256').update('never uploaded').digest('hex');
    await s.page.locator('#audit-receipt-file').setInputFiles(json('other.json', receiptFile(absent)));
    await s.page.locator(`tr.fail[data-receipt="${absent}"]`).waitFor();
    assert.match(await overall.textContent(), /^Receipts: FAIL — 0 of 1/);
    assert.match(await s.page.locator('tr.fail').textContent(), /is not among the 3 uploads/);

    // A list of another root (the provider published more than it handed over) is named.
    const longer = [...hashes, absent].sort();
    await s.page.locator('#audit-evidence-file').setInputFiles(json('list.json', { ...list, count: 4, upload_hashes: longer, merkle_root: 'f'.repeat(64) }));
    await s.page.locator('tr.fail').filter({ hasText: 'inconsistent' }).waitFor();
  } finally {
    await s.close();
  }
});

// Issue 27 §3: the builds a release's manifest counts, each matched with the public commits of the
// release's builds.json (commit → digest): a public commit's build passes, a build no public
// commit produces fails, and the count of uploads from each is shown.
test('the audit view names which app builds produced the records and whether each is a public commit', async () => {
  const s = await setup();
  try {
    const [publicBuild, unknownBuild] = ['a'.repeat(64), 'b'.repeat(64)];
    const commit = '1'.repeat(40);
    const manifest = {
      orthomask_version: '0', method: 'modified', n: 12, p1: 2, p2: 40, columns: ['a', 'QA'], sigma: 1,
      cohorts: { size: 12, sizes: [12] }, right_mask: 'haar', generator: 'chacha', kept_columns: [],
      column_means: [], cross_products: [], teaching_keys: false, warnings: [],
      builds: [{ digest: publicBuild, uploads: 7 }, { digest: unknownBuild, uploads: 5 }],
    };
    await s.page.goto(`${s.server.base}/#/audit`);
    await s.page.locator('#audit-manifest-file').setInputFiles({ name: 'manifest.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(manifest)) });
    const report = s.page.getByTestId('builds-report');
    await report.waitFor();
    // Before builds.json is given, nothing is claimed either way.
    assert.equal(await report.locator('tr.warn').count(), 2);
    const builds = `[\n{"commit": "${commit}", "digest": "${publicBuild}"}\n]\n`;
    await s.page.locator('#audit-builds-file').setInputFiles({ name: 'builds.json', mimeType: 'application/json', buffer: Buffer.from(builds) });
    const good = report.locator(`tr[data-build="${publicBuild}"]`);
    await good.and(s.page.locator('tr.pass')).waitFor();
    assert.match(await good.textContent(), new RegExp(`7.*the build of public commit ${commit}`));
    const bad = report.locator(`tr[data-build="${unknownBuild}"]`);
    assert.equal(await bad.getAttribute('class'), 'fail');
    assert.match(await bad.textContent(), /5.*not the build of any public commit in builds\.json/);
    await screenshot(s.page, 'audit-builds');
    // A builds.json that is not one is named, with the entry.
    await s.page.locator('#audit-builds-file').setInputFiles({ name: 'bad-builds.json', mimeType: 'application/json', buffer: Buffer.from('[{"commit": "x", "digest": "y"}]') });
    await s.page.getByTestId('builds-error').filter({ hasText: 'bad-builds.json: entry 1: commit "x" is not 40 lowercase hexadecimal digits' }).waitFor();
  } finally {
    await s.close();
  }
});
