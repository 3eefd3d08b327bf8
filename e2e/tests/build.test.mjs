// The release build (scripts/build-web.sh): index.html names every script, module and style it
// loads with the Subresource Integrity digest of the file the build wrote, and the page's fetch of
// the module checks it: one changed byte and the browser does not run it — a participant's link
// then shows no form and sends nothing. The Web Worker fetches the glue and the module with their
// digests too (www/worker.js), and the page refuses to open a survey from a build the deployment
// does not publish (issue 27 §2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setup, dist, mode, offers, uploads } from '../lib.mjs';

/** Every tag of dist/index.html with an href or src of this origin, and its integrity. */
async function loadedFiles() {
  const html = await readFile(join(dist, 'index.html'), 'utf8');
  return [...html.matchAll(/<(link|script)\b([^>]*)>/g)].map(([, tag, attrs]) => ({
    tag,
    rel: attrs.match(/\brel="([^"]+)"/)?.[1],
    path: attrs.match(/\b(?:href|src)="\.?\/?([^"]+)"/)?.[1],
    integrity: attrs.match(/\bintegrity="([^"]+)"/)?.[1],
  })).filter((f) => f.path);
}

test('index.html carries the SHA-384 of every script, module and style it loads', async () => {
  const files = await loadedFiles();
  const checked = files.filter((f) => ['stylesheet', 'modulepreload', 'preload'].includes(f.rel));
  assert.deepEqual(checked.map((f) => f.path).sort(), ['orthomask-web.js', 'orthomask-web_bg.wasm', 'style.css']);
  for (const f of checked) {
    // The digest computed here from the file on disk, independently of the build's Python.
    const digest = createHash('sha384').update(await readFile(join(dist, f.path))).digest('base64');
    assert.equal(f.integrity, `sha384-${digest}`, f.path);
  }
  // Only the icon and the web-app manifest are loaded without one (neither runs code).
  assert.deepEqual(files.filter((f) => !f.integrity).map((f) => f.path).sort(), ['icon.svg', 'manifest.webmanifest']);
});

test('the Web Worker fetches the glue and the module with the SHA-384 of the built files', async () => {
  const worker = await readFile(join(dist, 'worker.js'), 'utf8');
  const marks = [...worker.matchAll(/fetch\((\w+), \{ integrity: '([^']+)' \}\)/g)].map(([, what, integrity]) => ({ what, integrity }));
  const sri = async (path) => `sha384-${createHash('sha384').update(await readFile(join(dist, path))).digest('base64')}`;
  assert.deepEqual(marks, [
    { what: 'GLUE', integrity: await sri('orthomask-web.js') },
    { what: 'MODULE', integrity: await sri('orthomask-web_bg.wasm') },
  ]);
  assert.ok(!worker.includes('{{'), 'no mark is left');
});

test('a module that is not the built one is not run: one changed byte and the page stays empty', async () => {
  const s = await setup();
  try {
    const wasm = await readFile(join(dist, 'orthomask-web_bg.wasm'));
    const altered = Buffer.from(wasm);
    altered[altered.length - 1] ^= 1;
    await s.page.route('**/orthomask-web_bg.wasm', (route) => route.fulfill({
      status: 200, contentType: 'application/wasm', body: altered,
    }));
    await s.page.goto(`${s.server.base}/#/`);
    const outcome = await Promise.race([
      s.page.getByRole('heading', { level: 1, name: 'Orthomask' }).waitFor().then(() => 'the app started'),
      s.page.waitForEvent('pageerror').then((e) => `refused: ${e.message}`),
    ]);
    assert.match(outcome, /^refused: .*(integrity|digest|fetch)/i);
    assert.ok(s.record.console.some((m) => /integrity/i.test(m)), `console: ${s.record.console.join(' | ')}`);
  } finally {
    await s.close();
  }
});

test('a participant link served with one changed byte in the module shows no form and sends no values', async () => {
  const s = await setup();
  try {
    const wasm = await readFile(join(dist, 'orthomask-web_bg.wasm'));
    const altered = Buffer.from(wasm);
    altered[altered.length >> 1] ^= 1;
    await s.page.route('**/orthomask-web_bg.wasm', (route) => route.fulfill({
      status: 200, contentType: 'application/wasm', body: altered,
    }));
    const refused = s.page.waitForEvent('pageerror');
    await s.page.goto(`${s.server.base}/#/participate?survey=leaps-demo`);
    assert.match(String(await refused), /integrity|digest|fetch/i);
    // The page is what index.html holds without the app: no form, no field, no button.
    assert.equal(await s.page.locator('form, input, select, textarea, button').count(), 0);
    // Nothing asked for a place or sent values: no request carries a body, none goes to the API.
    const sent = s.record.requests.filter((r) => r.body !== '' || new URL(r.url).pathname.startsWith('/api/'));
    assert.deepEqual(sent, [], 'no request with values');
    assert.deepEqual(await offers(s), []);
    assert.deepEqual(await uploads(s), []);
  } finally {
    await s.close();
  }
});

test('a page whose build the deployment does not publish opens no survey: no place taken, nothing sent', async () => {
  const s = await setup();
  try {
    // The deployment accepts only another build (as if this one had been altered after publishing).
    await mode(s, { builds: ['0'.repeat(64)] });
    await s.page.goto(`${s.server.base}/#/participate?survey=leaps-demo`);
    const alert = s.page.getByRole('alert').filter({ hasText: 'does not accept' });
    await alert.waitFor();
    const text = await alert.textContent();
    assert.ok(text.includes(`app build "${s.server.build}"`), text);
    assert.match(text, /nothing was sent/);
    assert.equal(await s.page.getByRole('button', { name: 'Start the survey' }).count(), 0);
    assert.deepEqual(await offers(s), [], 'no place taken');
    assert.deepEqual(await uploads(s), []);
  } finally {
    await s.close();
  }
});
