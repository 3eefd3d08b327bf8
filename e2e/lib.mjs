// Shared helpers: the server, Debian's chromium through playwright-core, request/console/storage
// recorders, the mock deployment's test endpoints, screenshots and the non-blank-canvas check.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.mjs';
import { watchKeyMaterial } from './device-storage.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..');
export const dist = process.env.ORTHOMASK_DIST ?? join(repo, 'dist');
export const fixtures = process.env.ORTHOMASK_FIXTURES ?? join(repo, 'target', 'e2e-fixtures');
export const artifacts = process.env.ORTHOMASK_ARTIFACTS ?? join(repo, 'target', 'e2e-artifacts');

// How long any wait may take before a test is declared hung. It is a hang detector, not a
// performance bound: no test asserts on time, frame length or throughput (those figures are in
// e2e/bench.mjs), so it is generous enough that no load on a shared machine reaches it.
export const HANG_GUARD_MS = 300000;

// Installed in every page before its scripts: wraps `Worker` so a test can see the job protocol's
// messages (`window.__workerProbe.log`: "sent:Classroom#3", "received:Progress#3",
// "received:Done#3", …) and can hold the worker's results back (`hold = true`, then `release()`)
// to check what the page does while a job is outstanding — observed, never timed.
function installWorkerProbe() {
  const Real = window.Worker;
  if (!Real || window.__workerProbe) return;
  const probe = { log: [], hold: false, held: [] };
  probe.release = () => {
    probe.hold = false;
    for (const deliver of probe.held.splice(0)) deliver();
  };
  window.__workerProbe = probe;
  // Messages are JSON strings: {"id":3,"job":{"Classroom":…}} one way, {"Done":{"id":3,…}} back.
  const describe = (data) => {
    if (typeof data !== 'string') return { kind: 'other', id: '' };
    const head = data.slice(0, 300);
    const kind = (head.match(/"job":\{"(\w+)"/) ?? head.match(/^\{"(\w+)"/) ?? head.match(/^"(\w+)"$/) ?? [])[1] ?? 'other';
    const id = (head.match(/"id":(\d+)/) ?? [])[1] ?? '';
    return { kind, id };
  };
  class ProbedWorker extends Real {
    postMessage(data, ...rest) {
      const { kind, id } = describe(data);
      probe.log.push(`sent:${kind}#${id}`);
      return super.postMessage(data, ...rest);
    }
    get onmessage() { return super.onmessage; }
    set onmessage(handler) {
      super.onmessage = handler && ((event) => {
        const { kind, id } = describe(event.data);
        probe.log.push(`received:${kind}#${id}`);
        if (probe.hold && kind === 'Done') {
          probe.held.push(() => handler.call(this, event));
          return;
        }
        handler.call(this, event);
      });
    }
  }
  window.Worker = ProbedWorker;
}

/**
 * Hold the worker's results, run `start` (which starts a job of `kind`), and return the id of the
 * job request that went to the worker. Call `releaseWorker` to deliver the held results.
 */
export async function startHeldJob(page, kind, start) {
  const mark = await page.evaluate(() => { window.__workerProbe.hold = true; return window.__workerProbe.log.length; });
  await start();
  const handle = await page.waitForFunction(([from, k]) => window.__workerProbe.log.slice(from)
    .find((e) => e.startsWith(`sent:${k}#`)), [mark, kind]);
  return (await handle.jsonValue()).split('#')[1];
}

/** Deliver the results held since `startHeldJob` and stop holding. */
export async function releaseWorker(page) {
  await page.evaluate(() => window.__workerProbe.release());
}

/** The protocol messages seen so far. */
export async function workerLog(page) {
  return page.evaluate(() => window.__workerProbe.log.slice());
}

export async function setup({ viewport = { width: 1280, height: 900 }, locale = 'en-US' } = {}) {
  const server = await startServer({ dist, fixtures });
  const profile = await mkdtemp(join(tmpdir(), 'orthomask-e2e-'));
  const record = { requests: [], console: [], errors: [] };
  // One browser on `profile`, with the recorders attached; `restart` opens the next one.
  const open = async (known) => {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      headless: true,
      viewport,
      locale,
      acceptDownloads: true,
      // No back/forward cache: a test that leaves a page means it to unload (a page kept there
      // stays alive, and the participant's page, which starts no Web Worker, may be kept).
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--disable-features=BackForwardCache'],
    });
    context.setDefaultTimeout(HANG_GUARD_MS);
    await context.addInitScript(installWorkerProbe);
    const page = context.pages()[0] ?? await context.newPage();
    // `worker`: made by the service worker (its install fetches the app's files), not the page.
    context.on('request', (r) => record.requests.push({
      url: r.url(), method: r.method(), body: r.postData() ?? '', headers: r.headers(), worker: r.serviceWorker() !== null,
    }));
    page.on('console', (m) => record.console.push(m.text()));
    page.on('pageerror', (e) => record.errors.push(String(e)));
    // The key material every page of this context receives and sends (e2e/device-storage.mjs).
    const secrets = watchKeyMaterial(context, known);
    return { context, page, secrets };
  };
  const first = await open(null);
  await mkdir(artifacts, { recursive: true });
  const s = {
    server, record, ...first,
    /** Quit the browser and start it again on the same profile: the device's next visit,
     * with nothing of the last one left running (its storage stays). */
    async restart() {
      await s.secrets.settled();
      await s.context.close();
      Object.assign(s, await open(s.secrets));
    },
    async close() {
      await s.context.close();
      await server.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
  return s;
}

/** Set the mock deployment's behaviour (`POST /__mock/mode`, e2e/server.mjs) for setup `s`. */
export async function mode(s, m) {
  const r = await fetch(`${s.server.base}/__mock/mode`, { method: 'POST', body: JSON.stringify(m) });
  assert.equal(r.status, 200);
}

/** Every upload the mock services received, in order (`/__mock/uploads`). */
export async function uploads(s) {
  return (await fetch(`${s.server.base}/__mock/uploads`)).json();
}

/** Every place request the mock collector answered, in order (`/__mock/offers`). */
export async function offers(s) {
  return (await fetch(`${s.server.base}/__mock/offers`)).json();
}

/** How many uploads the mock services stored: one per token and service (`/__mock/receipts`). */
export async function receiptCount(s) {
  return (await fetch(`${s.server.base}/__mock/receipts`)).json();
}

/** Every fate request the mock collector answered, in order (`/__mock/fates`). */
export async function fates(s) {
  return (await fetch(`${s.server.base}/__mock/fates`)).json();
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

/** Variance of a canvas's pixels (all channels): 0 for a blank canvas. */
export async function canvasVariance(page, selector) {
  return page.$eval(selector, (canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let sum = 0; let sq = 0;
    for (let i = 0; i < data.length; i += 1) { sum += data[i]; sq += data[i] * data[i]; }
    const n = data.length;
    return sq / n - (sum / n) ** 2;
  });
}

export { readDeviceStorage, assertNothingKept, assertDeviceClean, watchKeyMaterial, numbersIn } from './device-storage.mjs';
export { waitFor } from './wait.mjs';

