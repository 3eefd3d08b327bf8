// What the end-to-end scripts against the real services share: where the binary and the built
// app are, starting `orthomask serve all` on loopback, JSON calls to its API, waiting for a
// condition (e2e/wait.mjs, shared with the web suite), Chromium, and the relative comparison of
// the acceptance tolerance.
import { chromium } from 'playwright-core';
import { spawn } from 'node:child_process';
import { readFile, access, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../e2e/wait.mjs';

export { waitFor };

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const cli = resolve(process.env.ORTHOMASK_BIN ?? join(repo, 'target', 'release', 'orthomask'));
export const dist = resolve(process.env.WEB_DIST ?? join(repo, 'dist'));
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
/** The issues' acceptance tolerance for "identical" statistics, relative. */
export const TOLERANCE = 1e-9;

/** `--name value` pairs of the command line. */
export function parseArgs(argv) {
  return Object.fromEntries(
    argv.reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []),
  );
}

/** A small deterministic generator of uniforms in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function exists(p) { try { await access(p); return true; } catch { return false; } }

/** Fail unless the binary and the built app are there. */
export async function requireBuilt() {
  if (!(await exists(cli))) throw new Error(`${cli} is missing: cargo build --release --bin orthomask`);
  if (!(await exists(join(dist, 'index.html')))) throw new Error(`${dist}/index.html is missing: bash scripts/build-web.sh`);
}

/**
 * `orthomask serve all` in `data` on free loopback ports with its default right-masking services
 * (three) and the built app; `extra` adds arguments; `bin` and `web` are another binary and app
 * directory than this run's (the page-load benchmark's earlier build); `port` the collector's
 * (the others follow it; 0: any free ports). Answers services.json's
 * URLs, the admin token, the output so far and `stop()` (SIGTERM, which must end with exit code 0).
 */
export async function startServices(data, extra = [], { bin = cli, web = dist, port = 0 } = {}) {
  const child = spawn(bin, ['serve', 'all', '--data-dir', data, '--port', String(port),
    '--web-dir', web, '--rate-burst', '100000', '--rate-per-second', '10000', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
  const services = await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`orthomask serve all exited: ${output}`);
    try { return JSON.parse(await readFile(join(data, 'services.json'), 'utf8')); } catch { return null; }
  }, 'the services to start');
  const admin = (await readFile(join(data, 'admin-token'), 'utf8')).trim();
  return {
    ...services, admin, output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const r = await exited;
      if (r.code !== 0) throw new Error(`orthomask serve all stopped with ${JSON.stringify(r)}: ${output}`);
    },
  };
}

/** A JSON request; answers the status, the parsed JSON (or null) and the text. */
export async function api(method, url, body, token) {
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, json, text };
}

/** Debian's headless Chromium. */
export function launchChromium() {
  return chromium.launch({
    executablePath: chromiumPath, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The relative difference of `a` and `b`; throws when it exceeds [`TOLERANCE`]. */
export function agree(a, b, what) {
  const rel = Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-300);
  if (!(rel <= TOLERANCE)) throw new Error(`${what}: ${a} vs ${b} (relative ${rel.toExponential(2)} > ${TOLERANCE})`);
  return rel;
}

/** Throws when the page scrolls sideways on its (phone-width) viewport. */
export async function fitsWidth(page, what) {
  const { scroll, viewport } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth, viewport: window.innerWidth,
  }));
  if (scroll > viewport + 1) throw new Error(`${what} is ${scroll}px wide on a ${viewport}px screen`);
}

/** The coefficients the analyst view shows (its table's exact values), once the table is there. */
export async function analystCoefficients(page) {
  const table = page.getByTestId('linear-coefficients');
  await table.waitFor({ timeout: 60000 });
  return table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    name: tr.dataset.term, estimate: Number(tr.querySelector('.estimate').dataset.exact),
  })));
}

/** Every shown coefficient equals the CLI fit's (same names, same order, [`TOLERANCE`]); answers the largest relative difference. */
export function sameCoefficients(cliFit, shown, what) {
  const names = (list) => list.map((c) => c.name).join(',');
  if (names(shown) !== names(cliFit.coefficients)) throw new Error(`${what}: the analyst view shows ${names(shown)}, the CLI ${names(cliFit.coefficients)}`);
  return cliFit.coefficients.reduce((worst, c, k) => Math.max(worst, agree(c.estimate, shown[k].estimate, `${what}: ${c.name}`)), 0);
}

/** Answer every question of the open form: a number mid-range, else the first choice. */
export async function answerEverything(page) {
  const review = page.getByRole('region', { name: 'What leaves your device' });
  for (let screen = 0; screen < 50; screen += 1) {
    if (await review.isVisible()) return;
    const number = page.locator('input[type=number]');
    if (await number.count()) {
      const min = Number(await number.getAttribute('min'));
      const max = Number(await number.getAttribute('max'));
      const step = await number.getAttribute('step');
      const value = min + (max - min) * 0.37;
      await number.fill(String(step === '1' ? Math.round(value) : value));
    } else {
      await page.getByRole('radio').first().check();
    }
    await page.getByRole('button', { name: /^(Next|Review)$/ }).click();
  }
  await review.waitFor();
}

/** Run an end-to-end script's `main`, exiting non-zero with its stack on failure. */
export function run(name, main) {
  main().catch((e) => {
    console.error(`[e2e ${name}] FAILED: ${e.stack ?? e}`);
    process.exit(1);
  });
}

/**
 * An end-to-end session: `out` emptied, fresh services in a temporary directory, Chromium; then
 * `body(services, browser)`; then, whatever happened, the browser closed, the services stopped
 * (they must exit cleanly) and their directory removed.
 */
export async function withServices(name, out, body) {
  await requireBuilt();
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const data = await mkdtemp(join(tmpdir(), `orthomask-e2e-${name}-`));
  const services = await startServices(data);
  let browser;
  try {
    browser = await launchChromium();
    await body(services, browser);
  } finally {
    if (browser) await browser.close();
    await services.stop();
    await rm(data, { recursive: true, force: true });
  }
}
