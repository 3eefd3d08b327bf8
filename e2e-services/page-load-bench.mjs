// The participant page's load, measured as a participant on a phone in the field meets it
// (issue 25; scripts/bench-page-load.sh runs it). A benchmark, not a test: it prints figures and
// fails only when something breaks.
//
// For each build given (this run's and, with --before-bin/--before-dist, an earlier one): fresh
// `orthomask serve all` (the collector serves the app, as in production) behind a throttled link
// (e2e-services/throttle.mjs: Fast 3G, 1.6 Mbit/s down, 150 ms round trip, one link for every
// connection, the service worker's included), and Chromium with its CPU slowed 4× (DevTools'
// emulation). A participant link of a live demonstration is opened:
//   first visit   a browser that never saw the site: from the start of the navigation to the
//                 consent screen being usable (the first frame drawn with its checkbox enabled,
//                 on the page's own clock), then every byte until the link is quiet (the
//                 service worker's install included);
//   repeat visit  the same browser started again later, online, the same link.
// Then the modules' sizes against their budgets (scripts/web-budgets.json).
//
//   node e2e-services/page-load-bench.mjs [--before-bin BIN --before-dist DIR] [--out DIR]
import { mkdtemp, readFile, readdir, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { repo, cli, dist, parseArgs, startServices, requireBuilt, waitFor } from './lib.mjs';
import { throttledProxy, FAST_3G } from './throttle.mjs';

const args = parseArgs(process.argv.slice(2));
const out = args.out ?? join(repo, 'target', 'page-load-bench');
const budgets = JSON.parse(await readFile(join(repo, 'scripts', 'web-budgets.json'), 'utf8'));
const CPU_SLOWDOWN = 4;
const SURVEY = 'leaps-demo';
const log = (m) => console.error(`[page-load] ${m}`);

/** Wait until no byte has crossed the link for `quietMs`. */
async function quiet(link, quietMs = 2000) {
  let last = -1;
  let since = performance.now();
  for (;;) {
    const { down, up } = link.counts();
    if (down + up !== last) { last = down + up; since = performance.now(); }
    if (performance.now() - since >= quietMs) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const CONSENT = 'I have read this and agree to take part.';

/**
 * Run in the page before its own scripts: note, on the page's clock (`performance.now()`, from
 * the start of the navigation), the first animation frame in which the consent checkbox labelled
 * `label` is in the document and enabled.
 */
function usableAt(label) {
  const usable = () => [...document.querySelectorAll('input[type=checkbox]')]
    .some((box) => !box.disabled && [...(box.labels ?? [])].some((l) => l.textContent.includes(label)));
  const watch = new MutationObserver(() => {
    if (!usable()) return;
    watch.disconnect();
    requestAnimationFrame(() => { window.orthomaskBench = { consentUsableAt: performance.now() }; });
  });
  watch.observe(document, { childList: true, subtree: true, attributes: true });
}

/** One visit in a browser on `profile`: time to the usable consent screen, then the bytes. */
async function visit(profile, link, url) {
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true,
    viewport: { width: 375, height: 740 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    await context.addInitScript(usableAt, CONSENT);
    const page = context.pages()[0] ?? await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
    // Each request's start and end on the visit's clock (page-load.json): where the time goes.
    const requests = [];
    const begun = new Map();
    let start = performance.now();
    context.on('request', (r) => begun.set(r, performance.now()));
    const ended = (r, outcome) => requests.push({
      path: new URL(r.url()).pathname, method: r.method(), by: r.serviceWorker() ? 'service worker' : 'page', outcome,
      startMs: Math.round((begun.get(r) ?? start) - start), endMs: Math.round(performance.now() - start),
    });
    context.on('requestfinished', (r) => ended(r, 'finished'));
    context.on('requestfailed', (r) => ended(r, 'failed'));
    link.reset();
    start = performance.now();
    await page.goto(url, { waitUntil: 'commit' });
    const consent = page.getByLabel(CONSENT);
    await consent.waitFor({ state: 'visible', timeout: 300000 });
    await waitFor(async () => (await consent.isEnabled()) || null, 'the consent checkbox to be enabled');
    // The page's own clock (usableAt), from the start of its navigation to the first frame drawn
    // with the checkbox enabled: not this script's round trips to the browser.
    const consentMs = await waitFor(() => page.evaluate(() => window.orthomaskBench?.consentUsableAt), 'the page to note the frame');
    const scriptMs = performance.now() - start;
    // The page's own view of its requests (Resource Timing, same clock as consentMs): when each
    // answer was in the browser, as against when the page's thread got to it (page-load.json).
    const resources = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => ({
      path: new URL(e.name).pathname, startMs: Math.round(e.startTime), responseEndMs: Math.round(e.responseEnd),
      worker: e.workerStart > 0, bytes: e.transferSize,
    })));
    // The app's own steps (User Timing marks, services::clock::mark), on the same clock.
    const steps = await page.evaluate(() => performance.getEntriesByType('mark')
      .map((m) => ({ step: m.name, atMs: Math.round(m.startTime) })));
    const beforeConsent = requests.length;
    // Everything the visit sets going (the service worker's install too) is counted.
    await page.evaluate(() => navigator.serviceWorker?.ready);
    await quiet(link);
    requests.sort((a, b) => a.startMs - b.startMs);
    return { consentMs, scriptMs, ...link.counts(), requests: requests.length, beforeConsent, timeline: requests, resources, steps };
  } finally {
    await context.close();
  }
}

/** Measure one build: first and repeat visit. */
async function measure(name, bin, web) {
  const data = await mkdtemp(join(tmpdir(), `orthomask-page-load-${name}-`));
  const profile = await mkdtemp(join(tmpdir(), `orthomask-page-load-profile-${name}-`));
  const services = await startServices(data, [], { bin, web });
  const link = await throttledProxy(new URL(services.collector).host, FAST_3G);
  try {
    const url = `${link.url}/#/participate?survey=${SURVEY}`;
    const first = await visit(profile, link, url);
    log(`${name}: first visit ${JSON.stringify({ ...first, timeline: undefined, resources: undefined, steps: undefined })}`);
    const repeat = await visit(profile, link, url);
    log(`${name}: repeat visit ${JSON.stringify({ ...repeat, timeline: undefined, resources: undefined, steps: undefined })}`);
    return { name, first, repeat };
  } finally {
    await link.close();
    await services.stop();
    await rm(data, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  }
}

/** The WebAssembly modules of a built app directory with their sizes. */
async function modules(web) {
  const files = (await readdir(web)).filter((f) => f.endsWith('.wasm'));
  const size = async (p) => { try { return (await stat(p)).size; } catch { return null; } };
  return Promise.all(files.map(async (f) => ({
    file: f,
    module: f.replace(/-[0-9a-f]{16}_bg\.wasm$/, '_bg.wasm'),
    raw: await size(join(web, f)), br: await size(join(web, `${f}.br`)), gz: await size(join(web, `${f}.gz`)),
  })));
}

const kB = (n) => (n === null || n === undefined ? '—' : `${(n / 1000).toFixed(1)} kB`);
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;

async function main() {
  await requireBuilt();
  await mkdir(out, { recursive: true });
  const builds = [];
  if (args['before-bin'] && args['before-dist']) builds.push(['before', args['before-bin'], args['before-dist']]);
  builds.push(['this build', cli, dist]);
  const results = [];
  for (const [name, bin, web] of builds) results.push({ ...(await measure(name, bin, web)), modules: await modules(web) });
  await writeFile(join(out, 'page-load.json'), JSON.stringify({ budgets, results }, null, 2));

  console.log(`\nParticipant link #/participate?survey=${SURVEY}, Fast 3G (${FAST_3G.downBitsPerSecond / 1e6} Mbit/s down, ${FAST_3G.upBitsPerSecond / 1e6} up, ${FAST_3G.rttMs} ms round trip), CPU ${CPU_SLOWDOWN}× slower:\n`);
  console.log('| build | visit | to the consent screen | target | bytes received | bytes sent | target (received) | requests | connections |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(`| ${r.name} | first | ${s(r.first.consentMs)} | < ${s(budgets.first_visit.consent_ms)} | ${kB(r.first.down)} | ${kB(r.first.up)} | < ${kB(budgets.first_visit.bytes)} | ${r.first.requests} | ${r.first.connections} |`);
    console.log(`| ${r.name} | repeat | ${s(r.repeat.consentMs)} | < ${s(budgets.repeat_visit.consent_ms)} | ${kB(r.repeat.down)} | ${kB(r.repeat.up)} | < ${kB(budgets.repeat_visit.bytes)} | ${r.repeat.requests} | ${r.repeat.connections} |`);
  }
  // Where a visit's time goes: the app's own steps (services::clock::mark) on the page's clock.
  for (const r of results) {
    for (const visit of ['first', 'repeat']) {
      const steps = r[visit].steps.map((m) => `${m.step.replace(/^orthomask:/, '')} ${s(m.atMs)}`).join(' → ');
      console.log(`${r.name}, ${visit} visit: ${steps || 'no steps marked'} → consent screen ${s(r[visit].consentMs)}`);
    }
  }
  if (results.length === 2) {
    const [b, a] = results;
    console.log(`\nThis build against the earlier one: first visit ${(b.first.down / a.first.down).toFixed(1)}× fewer bytes and ${(b.first.consentMs / a.first.consentMs).toFixed(1)}× sooner; repeat visit ${(b.repeat.down / a.repeat.down).toFixed(1)}× fewer bytes and ${(b.repeat.consentMs / a.repeat.consentMs).toFixed(1)}× sooner.`);
  }
  console.log('\n| build | WebAssembly module | bytes | Brotli | gzip | budget (bytes) | within |');
  console.log('|---|---|---:|---:|---:|---:|:-:|');
  for (const r of results) {
    for (const m of r.modules) {
      const budget = budgets.modules[m.module];
      const within = budget === undefined ? '—' : (m.raw <= budget ? 'yes' : 'no');
      console.log(`| ${r.name} | ${m.file} | ${m.raw} | ${m.br ?? '—'} | ${m.gz ?? '—'} | ${budget ?? '—'} | ${within} |`);
    }
  }
}

main().catch((e) => {
  console.error(`[page-load] FAILED: ${e.stack ?? e}`);
  process.exit(1);
});
