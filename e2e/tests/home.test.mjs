// Home page: the plain-words introduction, the five views, keyboard navigation, phone layout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setup, screenshot } from '../lib.mjs';

test('home explains Orthomask and links to the five views', async () => {
  const s = await setup();
  try {
    await s.page.goto(`${s.server.base}/#/`);
    await s.page.getByRole('heading', { level: 1, name: 'Orthomask' }).waitFor();
    const cards = s.page.locator('nav.cards a');
    assert.equal(await cards.count(), 5);
    for (const name of ['Take a survey', 'Analyse a release', 'Classroom', 'Audit', 'Survey team']) {
      assert.ok(await s.page.getByRole('link', { name }).first().isVisible(), name);
    }
    // Keyboard: tab to the "Analyse a release" card and follow it with Enter.
    const card = s.page.locator('nav.cards a', { hasText: 'Analyse a release' });
    await card.focus();
    await s.page.keyboard.press('Enter');
    await s.page.waitForURL(/#\/analyze/);
    await s.page.getByRole('heading', { level: 1, name: /Analyse a masked release/ }).waitFor();
    await s.page.goto(`${s.server.base}/#/nowhere`);
    await s.page.getByRole('heading', { name: 'Page not found' }).waitFor();
    assert.deepEqual(s.record.errors, []);
    await s.page.goto(`${s.server.base}/#/`);
    await screenshot(s.page, 'home');
  } finally {
    await s.close();
  }
});

test('every view fits a phone screen without horizontal scrolling, with its content drawn', async () => {
  const s = await setup({ viewport: { width: 375, height: 740 } });
  try {
    // Each view with what shows that its content (tables, plots) has rendered, not just its title.
    const views = [
      ['#/', 'nav.cards a'],
      ['#/participate', '[data-testid="static-host"]'],
      ['#/participate?demo=leaps-demo', 'text=I have read this and agree to take part.'],
      ['#/admin', '#admin-token'],
      ['#/classroom', '[data-testid="condition"]'],
      ['#/analyze?data=fixtures/release.csv&y=ADL&x=BBS,Age&original=fixtures/leaps_table2.csv&manifest=fixtures/manifest.json', '[data-testid="linear-coefficients"]'],
      ['#/audit?data=fixtures/release.csv&manifest=fixtures/manifest.json', '[data-testid="overall"]'],
    ];
    for (const [route, content] of views) {
      await s.page.goto(`${s.server.base}/${route}`);
      await s.page.locator(content).first().waitFor();
      // Two animation frames: the layout that follows the content's render is done (ordered by
      // the browser's frame loop, not by a delay that a loaded machine could outrun).
      await s.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
      const width = await s.page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 376, `${route} is ${width}px wide on a 375px screen`);
    }
    await s.page.goto(`${s.server.base}/#/`);
    await screenshot(s.page, 'home-phone');
  } finally {
    await s.close();
  }
});
