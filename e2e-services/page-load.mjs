// The participant's page loads small and cached (issue 25, "done means"), checked by its
// structure through the real collector — never by a time (scripts/bench-page-load.sh measures).
//
//   node e2e-services/page-load.mjs --out DIR
//
// 1. A first visit to a participant link in a fresh browser: the page, its service worker and
//    any worker never request the whole app's module or worker (sw.js's LAZY_FILES) and no Web
//    Worker starts; the participant's module and glue arrive Brotli- or gzip-encoded under
//    content-hashed names served `immutable`; index.html and sw.js are `no-cache` with an ETag.
//    What index.html's bootstrap starts while the module downloads (the deployment, sw.js,
//    index.html: src/services/early.rs) is taken over by the app, each request once; the
//    service worker is registered only after the place is taken.
// 2. Revalidation, asked directly: index.html and sw.js answer `If-None-Match` with their ETag
//    with 304 and no body; the module's Brotli encoding decodes to the built file's bytes; Range
//    works. The next visit in the browser takes every file from the service worker's cache (sw.js
//    too, as the worker keeps it, read by the bootstrap and taken over), and every request is
//    answered by the worker's static routes, none by its fetch handler: the network is asked only
//    for the deployment and the place.
// 3. Another view from the participant's page: the page reloads into the whole app's module,
//    which starts its worker.
// 4. A new version never strands a waiting upload: a participant sends offline (the masked
//    upload waits in IndexedDB), the services are restarted serving a new build (another sw.js)
//    that still accepts the old one (`--accept-build`), the participant comes back online and
//    opens the page: the new service worker takes over (only its cache is left) and the waiting
//    upload is sent and received by the provider.
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import {
  repo, dist, parseArgs, waitFor, api, startServices, requireBuilt, launchChromium, answerEverything, run,
} from './lib.mjs';
import { serviceWorkerLists } from '../e2e/built-app.mjs';

const args = parseArgs(process.argv.slice(2));
const out = resolve(args.out ?? join(repo, 'target', 'e2e-page-load'));
const log = (m) => console.log(`[e2e page-load] ${m}`);
const SURVEY = 'leaps-demo';
const check = (ok, what) => { if (!ok) throw new Error(what); };

/** A port with the next four free too (the collector, the provider, three right-masking services). */
async function freePorts(count = 5) {
  const free = (port) => new Promise((res) => {
    const s = createServer().once('error', () => res(false)).listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    let all = true;
    for (let i = 0; i < count && all; i += 1) all = await free(base + i);
    if (all) return base;
  }
  throw new Error('no five consecutive free ports');
}

/** The built app's names, read from dist/ itself. */
async function builtNames() {
  const files = await readdir(dist);
  const one = (re, what) => {
    const found = files.filter((f) => re.test(f));
    check(found.length === 1, `dist/ should hold one ${what}, it holds ${JSON.stringify(found)}`);
    return found[0];
  };
  const lazy = (await serviceWorkerLists(dist)).lazy.map((l) => l.file);
  return {
    participantWasm: one(/^orthomask-participant-[0-9a-f]{16}_bg\.wasm$/, 'participant module'),
    participantGlue: one(/^orthomask-participant-[0-9a-f]{16}\.js$/, 'participant glue'),
    wholeWasm: one(/^orthomask-web-[0-9a-f]{16}_bg\.wasm$/, 'whole-app module'),
    wholeGlue: one(/^orthomask-web-[0-9a-f]{16}\.js$/, 'whole-app glue'),
    lazy,
  };
}

/** Every response the context sees (page, service worker, workers), with its headers. */
function recordResponses(context) {
  const seen = [];
  context.on('response', async (r) => {
    const entry = { url: r.url(), status: r.status(), fromServiceWorker: r.fromServiceWorker(), headers: {} };
    seen.push(entry);
    try { entry.headers = await r.allHeaders(); } catch { /* the page went away */ }
  });
  const requests = [];
  const sent = [];
  context.on('request', (r) => {
    requests.push(r.url());
    sent.push({ file: fileOf(r.url()), method: r.method(), worker: r.serviceWorker() !== null });
  });
  return { seen, requests, sent };
}

const fileOf = (url) => new URL(url).pathname.replace(/^\//, '') || 'index.html';

async function main() {
  await requireBuilt();
  const names = await builtNames();
  check(names.lazy.includes(names.wholeWasm) && names.lazy.includes(names.wholeGlue) && names.lazy.includes('worker.js'),
    `sw.js's LAZY_FILES should name the whole app's module, glue and worker.js: ${names.lazy}`);
  const port = await freePorts();
  const data = await mkdtemp(join(tmpdir(), 'orthomask-e2e-page-load-'));
  const next = await mkdtemp(join(tmpdir(), 'orthomask-e2e-page-load-next-'));
  let services = await startServices(data, [], { port });
  const browser = await launchChromium();
  try {
    const base = services.collector;
    const link = `${base}/#/participate?survey=${SURVEY}`;

    // ── 1. a first visit ───────────────────────────────────────────────────────────────────
    const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
    const first = recordResponses(context);
    const page = await context.newPage();
    await page.goto(link);
    await page.getByLabel('I have read this and agree to take part.').waitFor({ timeout: 120000 });
    await page.evaluate(() => navigator.serviceWorker.ready);
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    // The service worker's install has finished: every precached file is in its cache.
    await waitFor(async () => (await page.evaluate(async () => (await caches.keys()).length)) > 0 || null, 'the service worker to cache the app');
    // What the bootstrap started while the module downloaded (src/services/early.rs) was taken
    // over, each request once: nothing is left in its map, and the page asked for the deployment,
    // sw.js and index.html (its build: the files whose digests sw.js does not declare) once, and
    // never for a bundled survey (declared: a participant's page does not read them).
    const left = await page.evaluate(() => Object.keys(window.orthomaskApp.early));
    check(left.length === 0, `the bootstrap's early requests not taken over: ${left.join(', ')}`);
    const byPage = first.sent.filter((r) => !r.worker);
    const demos = (await readdir(join(dist, 'surveys'))).filter((f) => f.endsWith('.json')).map((f) => `surveys/${f}`);
    const asked = (file) => byPage.filter((r) => r.file === file && r.method === 'GET').length;
    for (const file of ['api/deployment', 'sw.js']) check(asked(file) === 1, `the first visit's page asked for ${file} ${asked(file)} times`);
    // index.html: the navigation (asked as /) and the read for the build.
    check(asked('index.html') === 2, `the first visit's page asked for index.html ${asked('index.html')} times, not twice (the page, and its read for the build)`);
    for (const file of demos) check(asked(file) === 0, `the first visit's page asked for ${file}, whose digest sw.js declares`);
    // The module started opening the survey (deployment, own build, place) before it drew the
    // form (services::participation::start_opening), and the form took that opening over: one
    // place, asked once.
    const marks = await page.evaluate(() => performance.getEntriesByType('mark').map((m) => m.name));
    const opening = marks.indexOf('orthomask:opening');
    const drawn = marks.indexOf('orthomask:form drawn');
    check(opening >= 0 && drawn > opening, `the opening did not start before the form was drawn: ${marks.join(', ')}`);
    const places = (visit) => visit.sent.filter((r) => r.method === 'POST' && r.file === `api/surveys/${SURVEY}/definition`).length;
    check(places(first) === 1, `the first visit asked for a place ${places(first)} times`);
    // The service worker is registered once the survey has opened: nothing of it (its script,
    // its install's requests) is asked for before the place is.
    const place = first.sent.findIndex((r) => r.method === 'POST' && r.file === `api/surveys/${SURVEY}/definition`);
    const worker = first.sent.findIndex((r) => r.worker);
    check(place >= 0 && worker > place, `the service worker's first request (#${worker}) came before the place was asked for (#${place})`);
    log(`first visit: the requests the bootstrap started early were each taken over, once (the deployment, sw.js, index.html), no bundled survey read; the service worker registered after the place`);
    const requested = first.requests.map(fileOf);
    for (const lazy of names.lazy) check(!requested.includes(lazy), `the participant's first visit requested ${lazy}: ${requested.join(', ')}`);
    check(page.workers().length === 0, `the participant's page started ${page.workers().length} Web Worker(s)`);
    log(`first visit: ${requested.length} requests, none for ${names.lazy.join(', ')}; no Web Worker`);
    const network = first.seen.filter((r) => !r.fromServiceWorker && r.status === 200);
    const response = (file) => network.find((r) => fileOf(r.url) === file);
    for (const file of [names.participantWasm, names.participantGlue]) {
      const r = response(file);
      check(r, `no network response for ${file}`);
      check(['br', 'gzip'].includes(r.headers['content-encoding']), `${file} came with content-encoding ${r.headers['content-encoding']}`);
      check(/\bimmutable\b/.test(r.headers['cache-control'] ?? ''), `${file} is served with cache-control ${r.headers['cache-control']}`);
      log(`${file}: content-encoding ${r.headers['content-encoding']}, cache-control ${r.headers['cache-control']}`);
    }
    for (const r of network.filter((x) => /-[0-9a-f]{16}(_bg)?\.[a-z]+$/.test(fileOf(x.url)))) {
      check(/\bimmutable\b/.test(r.headers['cache-control'] ?? ''), `${fileOf(r.url)}: cache-control ${r.headers['cache-control']}`);
    }
    for (const file of ['index.html', 'sw.js']) {
      const r = network.find((x) => fileOf(x.url) === file);
      check(r, `no network response for ${file}`);
      check(r.headers['cache-control'] === 'no-cache' && r.headers.etag, `${file}: cache-control ${r.headers['cache-control']}, etag ${r.headers.etag}`);
    }

    // ── 2. revalidation ─────────────────────────────────────────────────────────────────────
    for (const file of ['', 'sw.js']) {
      const full = await fetch(`${base}/${file}`);
      const etag = full.headers.get('etag');
      await full.arrayBuffer();
      const again = await fetch(`${base}/${file}`, { headers: { 'if-none-match': etag } });
      const body = await again.arrayBuffer();
      check(again.status === 304 && body.byteLength === 0, `/${file} with If-None-Match ${etag}: ${again.status}, ${body.byteLength} bytes`);
    }
    const built = await readFile(join(dist, names.participantWasm));
    const raw = await new Promise((res, rej) => {
      // Node's fetch decodes what it accepts; the raw Brotli bytes are read over plain HTTP.
      get(`${base}/${names.participantWasm}`, { headers: { 'accept-encoding': 'br' } }, (r) => {
        const chunks = [];
        r.on('data', (c) => chunks.push(c));
        r.on('end', () => res({ headers: r.headers, body: Buffer.concat(chunks) }));
      }).on('error', rej);
    });
    check(raw.headers['content-encoding'] === 'br' && /accept-encoding/i.test(raw.headers.vary ?? ''), `the module with Accept-Encoding br: ${JSON.stringify(raw.headers)}`);
    check(brotliDecompressSync(raw.body).equals(built), 'the Brotli encoding of the module does not decode to the built module');
    check(raw.body.length < built.length / 2, `Brotli gives ${raw.body.length} bytes of ${built.length}`);
    const range = await fetch(`${base}/${names.participantWasm}`, { headers: { range: 'bytes=0-3', 'accept-encoding': 'identity' } });
    const magic = Buffer.from(await range.arrayBuffer());
    check(range.status === 206 && magic.equals(Buffer.from([0, 0x61, 0x73, 0x6d])), `Range bytes=0-3: ${range.status} ${magic.toString('hex')}`);
    log(`revalidation: 304 for / and sw.js; the module's Brotli (${raw.body.length} of ${built.length} bytes) decodes to the built file; Range 206`);

    // The next visit: every file from the service worker's cache (sw.js too: the page reads the
    // copy the worker keeps of itself), and the network asked only for the API (the deployment
    // and the place), as DevTools shows the requests.
    const again = await context.newPage();
    const cdp = await context.newCDPSession(again);
    await cdp.send('Network.enable');
    // Which static route answered each request (DevTools' `serviceWorkerRouterInfo`). DevTools
    // sends a request's events in no fixed order, so each is kept by request id and joined when
    // read.
    const sent = [];
    const routed = new Map();
    cdp.on('Network.requestWillBeSent', (e) => sent.push({ id: e.requestId, file: fileOf(e.request.url) }));
    cdp.on('Network.responseReceived', (e) => routed.set(e.requestId, e.response.serviceWorkerRouterInfo));
    const sourceOf = (w) => routed.get(w.id)?.actualSourceType;
    const shownOf = () => sent.map((w) => `${w.file} ${sourceOf(w) ?? '-'}`).join(', ');
    const second = recordResponses(context);
    await again.goto(link);
    await again.getByLabel('I have read this and agree to take part.').waitFor({ timeout: 120000 });
    const participantFromCache = second.seen.filter((r) => fileOf(r.url) === names.participantWasm).every((r) => r.fromServiceWorker);
    check(participantFromCache, `the next visit fetched the module from the network: ${shownOf()}`);
    // DevTools' events reach this session on their own channel, so each request's answer is
    // waited for rather than assumed to have come with the form (the previous check's CI failure).
    await waitFor(async () => sent.every((w) => routed.has(w.id)) || null, `DevTools' answer to every request of the next visit (${shownOf()})`, 30);
    const shown = shownOf();
    // Every request was answered by the browser's static routes (sw.js, addStaticRoutes), none by
    // the worker's fetch handler: the app's files from this version's cache, the API from the
    // network. So the worker need not start before the page can.
    for (const w of sent) {
      const source = sourceOf(w);
      const expected = w.file.startsWith('api/') ? 'network' : 'cache';
      check(source === expected, `the next visit's ${w.file} was answered by ${source ?? 'no static route'}, not the ${expected} route: ${shown}`);
    }
    const fromNetwork = [...new Set(sent.filter((w) => sourceOf(w) === 'network').map((w) => w.file))].sort();
    check(JSON.stringify(fromNetwork) === JSON.stringify(['api/deployment', `api/surveys/${SURVEY}/definition`]),
      `the next visit asked the network for ${fromNetwork.join(', ')}, not only the deployment and the place: ${shown}`);
    // A page the worker controls reads its sw.js from the worker's cache: the bootstrap started
    // that read (and the list of caches) while the module started, and the app took both over.
    const leftAgain = await again.evaluate(() => Object.keys(window.orthomaskApp.early));
    check(leftAgain.length === 0, `the controlled page's early reads not taken over: ${leftAgain.join(', ')}`);
    check(!sent.some((w) => w.file === 'sw.js'), `the controlled page asked for sw.js instead of reading the worker's copy: ${shown}`);
    const marksAgain = await again.evaluate(() => performance.getEntriesByType('mark').map((m) => m.name));
    check(marksAgain.indexOf('orthomask:opening') >= 0 && marksAgain.indexOf('orthomask:form drawn') > marksAgain.indexOf('orthomask:opening'),
      `the next visit's opening did not start before the form was drawn: ${marksAgain.join(', ')}`);
    check(places(second) === 1, `the next visit asked for a place ${places(second)} times`);
    await again.close();
    log(`next visit, each request with the static route that answered it: ${shown}`);

    // ── 3. another view loads the whole app ──────────────────────────────────────────────────
    await page.getByRole('navigation').getByRole('link', { name: 'Analyse a release' }).click();
    await page.getByRole('heading', { level: 1, name: 'Analyse a masked release' }).waitFor({ timeout: 120000 });
    const all = first.requests.map(fileOf);
    check(all.includes(names.wholeWasm) && all.includes(names.wholeGlue), 'the analyst view did not load the whole app module');
    await waitFor(async () => page.workers().length > 0 || null, 'the whole app to start its worker');
    log('another view: the page reloaded into the whole app, which started its worker');
    await context.close();

    // ── 4. a new version under a waiting upload ─────────────────────────────────────────────
    const oldBuild = (await api('GET', `${base}/api/deployment`)).json.build;
    const field = await browser.newContext({ viewport: { width: 375, height: 740 } });
    const form = await field.newPage();
    await form.goto(link);
    await form.evaluate(() => navigator.serviceWorker.ready);
    await form.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await form.getByLabel('I have read this and agree to take part.').check({ timeout: 120000 });
    await form.getByRole('button', { name: 'Start the survey' }).click();
    await field.setOffline(true);
    await answerEverything(form);
    await form.getByRole('button', { name: 'Send', exact: true }).click();
    await form.getByTestId('form-waiting').waitFor({ timeout: 60000 });
    const oldCaches = await form.evaluate(async () => caches.keys());
    log(`offline: the masked upload waits (service worker cache ${oldCaches.join(', ')})`);

    // The new build: another sw.js (its cache's name), so another build digest.
    await cp(dist, next, { recursive: true });
    const sw = await readFile(join(next, 'sw.js'), 'utf8');
    check(sw.includes("const CACHE = 'orthomask-"), 'sw.js names no cache');
    await writeFile(join(next, 'sw.js'), sw.replace("const CACHE = 'orthomask-", "const CACHE = 'orthomask-next-"));
    await rm(join(next, 'sw.js.br'), { force: true });
    await rm(join(next, 'sw.js.gz'), { force: true });
    await services.stop();
    // The same data directory and ports (the page's origin, so its service worker and outbox);
    // services.json goes so that the start is awaited afresh.
    await rm(join(data, 'services.json'));
    services = await startServices(data, ['--accept-build', oldBuild], { port, web: next });
    const deployment = (await api('GET', `${base}/api/deployment`)).json;
    check(deployment.build !== oldBuild && deployment.builds.includes(oldBuild), `the new deployment: ${JSON.stringify(deployment)}`);
    // Back online, the page that answered would resend its in-memory upload at once (its
    // `online` listener), racing the update this step is about; so uploads fail until the new
    // version has taken over, and the upload keeps waiting in the outbox meanwhile.
    await field.route('**/uploads', (route) => route.abort());
    await field.setOffline(false);
    // The participant opens the page again (the browser then checks sw.js for a new version).
    await form.reload();
    await waitFor(async () => {
      const keys = await form.evaluate(async () => caches.keys()).catch(() => []);
      return keys.length === 1 && keys[0].startsWith('orthomask-next-') ? keys : null;
    }, 'the new version of the service worker to take over');
    // Under the new version, the page sends what waits in the outbox when it opens.
    await field.unroute('**/uploads');
    await form.reload();
    const panel = form.getByTestId('waiting-uploads');
    const hash = (await panel.getByTestId('receipt-hash').first().textContent({ timeout: 120000 }).catch(async (e) => {
      throw new Error(`${e.message}\nthe page shows: ${(await form.locator('main').textContent().catch(() => '?')).slice(0, 800)}`);
    })).trim();
    await form.reload();
    await form.getByLabel('I have read this and agree to take part.').waitFor({ timeout: 120000 });
    check(await form.getByTestId('waiting-item').count() === 0, 'the upload still waits after it was sent');
    // Stored once: the survey is closed, and the provider's published receipt lists hold it once.
    const closed = await api('POST', `${base}/api/admin/surveys/${SURVEY}/close`, {}, services.admin);
    check(closed.status < 300, `closing the survey: ${closed.status} ${closed.text}`);
    const times = await waitFor(async () => {
      let count = 0;
      for (let cohort = 0; cohort < 4; cohort += 1) {
        const list = await api('GET', `${services.msp}/api/surveys/${SURVEY}/cohorts/${cohort}/receipts`);
        if (list.status === 409) return null;
        count += (list.json?.upload_hashes ?? []).filter((h) => h === hash).length;
      }
      return count > 0 ? count : null;
    }, "the provider's receipt lists");
    check(times === 1, `the provider's receipt lists hold the upload ${times} times`);
    log(`new version: the new service worker took over, and the upload that waited was sent (receipt ${hash.slice(0, 16)}…, in the provider's receipt list once)`);
    await field.close();
  } finally {
    await browser.close();
    await services.stop();
    await rm(data, { recursive: true, force: true });
    await rm(next, { recursive: true, force: true });
  }
}

run('page-load', main);
