// Shared helpers: the server, Debian's chromium through playwright-core, request/console/storage
// recorders, screenshots and the non-blank-canvas check.
import { chromium } from 'playwright-core';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..');
export const dist = process.env.ORTHOMASK_DIST ?? join(repo, 'dist');
export const fixtures = process.env.ORTHOMASK_FIXTURES ?? join(repo, 'target', 'e2e-fixtures');
export const artifacts = process.env.ORTHOMASK_ARTIFACTS ?? join(repo, 'target', 'e2e-artifacts');

export async function setup({ viewport = { width: 1280, height: 900 } } = {}) {
  const server = await startServer({ dist, fixtures });
  const profile = await mkdtemp(join(tmpdir(), 'orthomask-e2e-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    viewport,
    acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  const record = { requests: [], console: [], errors: [] };
  context.on('request', (r) => record.requests.push({ url: r.url(), method: r.method(), body: r.postData() ?? '', headers: r.headers() }));
  page.on('console', (m) => record.console.push(m.text()));
  page.on('pageerror', (e) => record.errors.push(String(e)));
  await mkdir(artifacts, { recursive: true });
  return {
    server, context, page, record,
    async close() {
      await context.close();
      await server.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
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

/** Storage the page could have written to: local, session, IndexedDB, cookies, Cache API. */
export async function storageSnapshot(page) {
  return page.evaluate(async () => ({
    local: Object.fromEntries(Object.entries(localStorage)),
    session: Object.fromEntries(Object.entries(sessionStorage)),
    indexedDB: (await indexedDB.databases()).map((d) => d.name),
    cookie: document.cookie,
    caches: 'caches' in self ? await caches.keys() : [],
  }));
}

/** Every number anywhere inside a JSON value. */
export function numbersIn(value, out = []) {
  if (typeof value === 'number') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => numbersIn(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => numbersIn(v, out));
  return out;
}
