// The release build (scripts/build-web.sh): index.html names every script, module and style it
// loads with the Subresource Integrity digest of the file the build wrote, and the page's fetch of
// the module checks it: one changed byte and the browser does not run it. (The Web Worker still
// loads the module without a digest: code transparency, issue 27, closes that.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setup, dist } from '../lib.mjs';

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
