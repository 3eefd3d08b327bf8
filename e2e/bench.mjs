// Drives #/bench?run=1 in headless Chromium, watches the page for long tasks (a
// PerformanceObserver on the main thread while the worker computes), and prints the browser
// figures next to the native ones (JSON from examples/bench_native.rs, path in argv[2]).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setup, artifacts, screenshot } from './lib.mjs';

const native = JSON.parse(await readFile(process.argv[2], 'utf8'));
// Optional: the same native run pinned to one core (the browser's worker is one thread).
const single = process.argv[3] ? JSON.parse(await readFile(process.argv[3], 'utf8')) : null;
const s = await setup();
let status = 0;
try {
  await s.page.goto(`${s.server.base}/#/bench`);
  await s.page.getByRole('button', { name: 'Run the benchmark' }).waitFor();
  await s.page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push(Math.round(e.duration)); }).observe({ type: 'longtask' });
  });
  await s.page.getByRole('button', { name: 'Run the benchmark' }).click();
  await s.page.getByTestId('bench-json').waitFor({ timeout: 600000 });
  const browser = JSON.parse(await s.page.getByTestId('bench-json').textContent());
  const longTasks = await s.page.evaluate(() => window.__longTasks);
  await screenshot(s.page, 'bench');
  const key = (c) => JSON.stringify(c);
  const rows = browser.map((b) => {
    const n = native.find((x) => key(x.case) === key(b.case));
    const one = single?.find((x) => key(x.case) === key(b.case));
    const ratio = b.median_ms / n.median_ms;
    return { case: b.case, browser_ms: b.median_ms, native_ms: n.median_ms, ratio, within_target: ratio <= 2.5, native_not_slower: ratio >= 1,
      native_one_core_ms: one?.median_ms ?? null, ratio_one_core: one ? b.median_ms / one.median_ms : null };
  });
  const label = (c) => (c.MaskRecord ? `mask one record, p = ${c.MaskRecord.p}` : `regression, ${c.Regression.n} × ${c.Regression.k}`);
  const fmt = (v) => (v === null ? '—' : v.toFixed(2));
  console.log('| operation | browser (median ms) | native, all cores (ms) | browser / native | native ≤ browser | browser ≤ 2.5× native | native, 1 core (ms) | browser / native 1 core |');
  console.log('|---|---:|---:|---:|:-:|:-:|---:|---:|');
  const yes = (b) => (b ? 'yes' : 'no');
  for (const r of rows) console.log(`| ${label(r.case)} | ${fmt(r.browser_ms)} | ${fmt(r.native_ms)} | ${fmt(r.ratio)} | ${yes(r.native_not_slower)} | ${yes(r.within_target)} | ${fmt(r.native_one_core_ms)} | ${fmt(r.ratio_one_core)} |`);
  // Figures, not verdicts: the page's long tasks are printed (target: none over 100 ms) and never
  // fail the run — on a loaded machine they measure the load as much as the page.
  const worst = Math.max(0, ...longTasks);
  console.log(`\nMain-thread long tasks while the worker computed: ${longTasks.length} (longest ${worst} ms; target: none over 100 ms)`);
  await writeFile(join(artifacts, 'bench.json'), JSON.stringify({ rows, longTasks }, null, 2));
} catch (e) {
  console.error(`error: ${e.message ?? e}`);
  status = 1;
} finally {
  await s.close();
}
process.exit(status);
