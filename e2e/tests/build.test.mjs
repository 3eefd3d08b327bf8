// The release build (scripts/build-web.sh): index.html names every script, module and style it
// loads with the Subresource Integrity digest of the file the build wrote — both modules, the
// participant's and the whole app's (issue 25), their glue through the import map — and the page's
// fetches check it: one changed byte in a module or its glue and the browser does not run it — a
// participant's link then shows no form and sends nothing. Content-hashed names are the files' own
// SHA-256, and sw.js declares the digests of the files a participant never loads. The Web Worker fetches the glue and the module with their
// digests too (www/worker.js), and the page refuses to open a survey from a build the deployment
// does not publish (issue 27 §2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setup, dist, mode, offers, uploads } from '../lib.mjs';
import { serviceWorkerLists } from '../built-app.mjs';

const sha384 = async (path) => `sha384-${createHash('sha384').update(await readFile(join(dist, path))).digest('base64')}`;

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

/** The two modules index.html chooses between: [glue, module, module's integrity] each. */
async function bootstrapModules() {
  const html = await readFile(join(dist, 'index.html'), 'utf8');
  return [...html.matchAll(/\['\.\/([^']+)', '\.\/([^']+)', '([^']+)'\]/g)].map(([, glue, wasm, integrity]) => ({ glue, wasm, integrity }));
}

/** The content-hashed name of a module's file in dist/ (`orthomask-participant-HASH_bg.wasm`). */
async function builtName(pattern) {
  const found = (await readdir(dist)).filter((f) => pattern.test(f));
  assert.equal(found.length, 1, `${pattern}: ${found}`);
  return found[0];
}

test('index.html carries the SHA-384 of every script, module and style it loads', async () => {
  const files = await loadedFiles();
  const styles = files.filter((f) => f.rel === 'stylesheet');
  assert.equal(styles.length, 1);
  // The digests computed here from the files on disk, independently of the build's Python.
  assert.equal(styles[0].integrity, await sha384(styles[0].path));
  // Only the icon and the web-app manifest are loaded without one (neither runs code).
  assert.deepEqual(files.filter((f) => !f.integrity).map((f) => f.path).sort(), ['icon.svg', 'manifest.webmanifest']);
  // Both modules: the participant's and the whole app's, their WebAssembly fetched with its digest…
  const modules = await bootstrapModules();
  assert.deepEqual(modules.map((m) => m.wasm).sort(), [
    await builtName(/^orthomask-participant-[0-9a-f]{16}_bg\.wasm$/), await builtName(/^orthomask-web-[0-9a-f]{16}_bg\.wasm$/),
  ].sort());
  for (const m of modules) assert.equal(m.integrity, await sha384(m.wasm), m.wasm);
  // …and their glue imported under the import map's integrity.
  const html = await readFile(join(dist, 'index.html'), 'utf8');
  const map = JSON.parse(html.match(/<script type="importmap">([\s\S]*?)<\/script>/)[1]);
  assert.deepEqual(Object.keys(map.integrity).sort(), modules.map((m) => `./${m.glue}`).sort());
  for (const m of modules) assert.equal(map.integrity[`./${m.glue}`], await sha384(m.glue), m.glue);
});

test('the Web Worker fetches the glue and the module with the SHA-384 of the built files', async () => {
  const worker = await readFile(join(dist, 'worker.js'), 'utf8');
  const names = Object.fromEntries([...worker.matchAll(/const (GLUE|MODULE) = '\.\/([^']+)';/g)].map(([, what, file]) => [what, file]));
  assert.equal(names.GLUE, await builtName(/^orthomask-web-[0-9a-f]{16}\.js$/));
  assert.equal(names.MODULE, await builtName(/^orthomask-web-[0-9a-f]{16}_bg\.wasm$/));
  const marks = [...worker.matchAll(/fetch\((\w+), \{ integrity: '([^']+)' \}\)/g)].map(([, what, integrity]) => ({ what, integrity }));
  assert.deepEqual(marks, [
    { what: 'GLUE', integrity: await sha384(names.GLUE) },
    { what: 'MODULE', integrity: await sha384(names.MODULE) },
  ]);
  assert.ok(!worker.includes('{{'), 'no mark is left');
});

test('content-hashed names are the first 16 hexadecimal digits of the SHA-256 of the bytes', async () => {
  const hashed = (await readdir(dist)).filter((f) => /-[0-9a-f]{16}(_bg)?\.(js|wasm|css)$/.test(f));
  assert.equal(hashed.length, 5, `${hashed}`);
  for (const f of hashed) {
    const digest = createHash('sha256').update(await readFile(join(dist, f))).digest('hex');
    assert.equal(f.match(/-([0-9a-f]{16})(_bg)?\./)[1], digest.slice(0, 16), f);
  }
  // sw.js declares the SHA-256 of every file of the app but index.html (which a page reads: it
  // names the others' Subresource Integrity digests) and itself, each once: the three a
  // participant's page never loads in LAZY_FILES, every other in DECLARED_FILES.
  const { files, lazy, declared } = await serviceWorkerLists(dist);
  assert.equal(lazy.length, 3);
  const app = files.map((f) => (f === './' ? 'index.html' : f)).filter((f) => f !== 'index.html');
  assert.deepEqual([...lazy, ...declared].map((d) => d.file).sort(), [...new Set(app)].sort());
  for (const { file, sha256 } of [...lazy, ...declared]) {
    assert.equal(sha256, createHash('sha256').update(await readFile(join(dist, file))).digest('hex'), file);
  }
});

/** Serve `file` with one byte changed at `at` (a fraction of its length). */
async function altered(s, file, at) {
  const bytes = Buffer.from(await readFile(join(dist, file)));
  bytes[Math.min(bytes.length - 1, Math.floor(bytes.length * at))] ^= 1;
  await s.page.route(`**/${file}`, (route) => route.fulfill({
    status: 200, contentType: file.endsWith('.wasm') ? 'application/wasm' : 'text/javascript', body: bytes,
  }));
}

/**
 * The page refused its own build before a place: the alert says the deployment does not accept
 * it and that nothing was sent, no form opens, the mock holds `places` offers (those taken
 * before) and no upload. Answers the alert's text.
 */
async function refusedBeforePlace(s, places = 0) {
  const alert = s.page.getByRole('alert').filter({ hasText: 'does not accept' });
  await alert.waitFor();
  const text = await alert.textContent();
  assert.match(text, /nothing was sent/);
  assert.equal(await s.page.getByRole('button', { name: 'Start the survey' }).count(), 0);
  assert.equal((await offers(s)).length, places, 'no place taken');
  assert.deepEqual(await uploads(s), []);
  return text;
}

test('a module that is not the built one is not run: one changed byte and the page stays empty', async () => {
  const s = await setup();
  try {
    await altered(s, await builtName(/^orthomask-web-[0-9a-f]{16}_bg\.wasm$/), 1);
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

for (const [what, pattern] of [
  ['module', /^orthomask-participant-[0-9a-f]{16}_bg\.wasm$/],
  ['glue', /^orthomask-participant-[0-9a-f]{16}\.js$/],
]) {
  test(`a participant link served with one changed byte in the ${what} shows no form and sends no values`, async () => {
    const s = await setup();
    try {
      await altered(s, await builtName(pattern), 0.5);
      const refused = s.page.waitForEvent('pageerror');
      await s.page.goto(`${s.server.base}/#/participate?survey=leaps-demo`);
      assert.match(String(await refused), /integrity|digest|fetch|import/i);
      // Refused for its digest, by the browser (one more round trip to the page, so that the
      // console line logged with the error has been recorded).
      await s.page.waitForFunction(() => true);
      assert.ok(s.record.console.some((m) => /integrity/i.test(m)), `console: ${s.record.console.join(' | ')}`);
      // The page is what index.html holds without the app: no form, no field, no button.
      assert.equal(await s.page.locator('form, input, select, textarea, button').count(), 0);
      // Nothing asked for a place or sent values: no request carries a body, and none goes to the
      // API but the GET of the deployment (the collector's public description) that index.html
      // starts for a survey link while the module downloads (src/services/early.rs).
      const early = (r) => r.method === 'GET' && new URL(r.url).pathname === '/api/deployment';
      const sent = s.record.requests.filter((r) => r.body !== '' || (new URL(r.url).pathname.startsWith('/api/') && !early(r)));
      assert.deepEqual(sent, [], 'no request with values');
      assert.deepEqual(await offers(s), []);
      assert.deepEqual(await uploads(s), []);
    } finally {
      await s.close();
    }
  });
}

for (const [what, list, pattern] of [
  ["the whole app's module", 'lazy', /_bg\.wasm$/],
  ["the participant's module", 'declared', /^orthomask-participant-.*_bg\.wasm$/],
]) {
  test(`a service worker declaring another digest for ${what} opens no survey: no place taken, nothing sent`, async () => {
    // A dishonest collector serves sw.js declaring another SHA-256 for a module (to pass off
    // another module as the published build's). The page takes the declaration into its build
    // digest, which is then not the published build, so it refuses before anything is asked.
    const s = await setup();
    try {
      const text = await readFile(join(dist, 'sw.js'), 'utf8');
      const module = (await serviceWorkerLists(dist))[list].find((l) => pattern.test(l.file));
      const forged = `${module.sha256.slice(0, 63)}${module.sha256.endsWith('0') ? '1' : '0'}`;
      await s.page.route('**/sw.js', (route) => route.fulfill({
        status: 200, contentType: 'text/javascript', body: text.replace(module.sha256, forged),
      }));
      await s.page.goto(`${s.server.base}/#/participate?survey=leaps-demo`);
      await refusedBeforePlace(s);
    } finally {
      await s.close();
    }
  });
}

test('an index.html that is not the published one opens no survey: no place taken, nothing sent', async () => {
  // index.html is the one file besides sw.js that a page reads for its build: it names the
  // Subresource Integrity digest of every file the page runs, so sw.js does not declare its
  // digest. Served with one more character in a comment (scripts and integrity untouched, so the
  // app starts), the page's build is not the published one, and it refuses before a place.
  const s = await setup();
  try {
    const html = await readFile(join(dist, 'index.html'), 'utf8');
    const changed = html.replace('<body>', '<body><!-- x -->');
    assert.notEqual(changed, html);
    await s.page.route((url) => ['/', '/index.html'].includes(url.pathname), (route) => route.fulfill({
      status: 200, contentType: 'text/html', body: changed,
    }));
    await s.page.goto(`${s.server.base}/#/participate?survey=leaps-demo`);
    await refusedBeforePlace(s);
  } finally {
    await s.close();
  }
});

test("a controlled page whose worker's kept sw.js declares another digest opens no survey: no place taken, nothing sent", async () => {
  // Once a service worker controls the page, the page reads sw.js from the worker's cache (the
  // version it runs, src/services/app_build.rs) and no longer compares cached copies with what it
  // loaded. A cache someone filled — here the kept sw.js, declaring another SHA-256 for the whole
  // app's module — must still make a build that is not published, refused before a place.
  const s = await setup();
  try {
    const link = `${s.server.base}/#/participate?survey=leaps-demo`;
    await s.page.goto(link);
    await s.page.getByLabel('I have read this and agree to take part.').waitFor();
    await s.page.evaluate(() => navigator.serviceWorker.ready);
    await s.page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    const { lazy } = await serviceWorkerLists(dist);
    const module = lazy.find((l) => l.file.endsWith('_bg.wasm'));
    const forged = `${module.sha256.slice(0, 63)}${module.sha256.endsWith('0') ? '1' : '0'}`;
    const kept = await s.page.evaluate(async ([declared, other]) => {
      const [name] = await caches.keys();
      const cache = await caches.open(name);
      const text = await (await cache.match('sw.js')).text();
      await cache.put('sw.js', new Response(text.replace(declared, other), { headers: { 'content-type': 'text/javascript' } }));
      return text.includes(declared);
    }, [module.sha256, forged]);
    assert.ok(kept, 'the worker keeps its sw.js, with the declared digest');
    const places = (await offers(s)).length;
    await s.page.goto('about:blank');
    await s.page.goto(link);
    await refusedBeforePlace(s, places);
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
    const text = await refusedBeforePlace(s);
    assert.ok(text.includes(`app build "${s.server.build}"`), text);
  } finally {
    await s.close();
  }
});
