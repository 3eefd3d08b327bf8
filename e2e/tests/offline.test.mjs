// The participant form in the field (issue 13): installable and usable offline, in the
// participant's language, with questions that follow the answers. Against the mock deployment
// (e2e/server.mjs), with the browser context really offline (Playwright's setOffline):
// * a participant whose browser prefers Spanish opens the branching survey once online, loses
//   the connection, reloads the app from the service worker's copy, answers in Spanish through
//   the branches, sees "waiting to send" — only the masked upload waits, in IndexedDB — and gets
//   the receipt when the connection returns; exactly one upload reached the service;
// * an upload that waited across a visit is listed on the next one and sent when the page opens
//   online; a discarded one is never sent;
// * a waiting upload edited in storage to send elsewhere is refused before anything is sent;
// * the service worker's list of app files is the built app;
// * the catalogues' language follows the switcher and the answers stay.
// IndexedDB, localStorage, sessionStorage, cookies and the Cache API are read whole at every
// step (e2e/device-storage.mjs): no answer is kept anywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { setup, screenshot, readDeviceStorage, assertNothingKept, dist } from '../lib.mjs';

const SURVEY = 'habits-branching';
// Distinctive answers (none is a number of the definition): cigarettes, sleep, drinks per week.
const RAW_NUMBERS = [37, 6.75, 9];

async function uploads(s) {
  return (await fetch(`${s.server.base}/__mock/uploads`)).json();
}

/** Open the survey online, wait until the service worker controls the page and keeps its copy. */
async function openOnceOnline(s) {
  await s.page.goto(`${s.server.base}/#/participate?survey=${SURVEY}`);
  await s.page.evaluate(() => navigator.serviceWorker.ready);
  // Reloaded under the worker: this visit's offer goes through it and is kept.
  await s.page.reload();
  await s.page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  await s.page.getByRole('checkbox').waitFor();
}

/** Answer in Spanish: smokes yes → cigarettes asked; stress 2 → relax skipped; weekly → count. */
async function answerInSpanish(page) {
  const next = () => page.getByRole('button', { name: /^(Siguiente|Revisar)$/ }).click();
  const radio = async (label) => { await page.getByRole('radio', { name: label, exact: true }).check(); await next(); };
  const number = async (value) => { await page.locator('input[type=number]').fill(value); await next(); };
  await page.getByRole('checkbox', { name: 'He leído esto y acepto participar.' }).check();
  await page.getByRole('button', { name: 'Empezar la encuesta' }).click();
  await radio('Sí');
  await page.getByText('¿Cuántos cigarrillos fuma en un día normal?').waitFor();
  await number('37');
  await number('3');
  await number('6.75');
  await radio('2');
  // Stress 2 hides "what helps you relax": the next screen is the drinks question.
  await page.getByText('¿Con qué frecuencia bebe alcohol?').waitFor();
  await radio('Cada semana');
  await page.getByText('¿Cuántas bebidas alcohólicas toma, más o menos, en una semana?').waitFor();
  await number('9');
  await page.getByRole('region', { name: 'Lo que sale de su dispositivo' }).waitFor();
}

test('offline in Spanish through the branches: the masked upload waits, then goes out once with its receipt', async () => {
  const s = await setup({ locale: 'es-ES' });
  try {
    await openOnceOnline(s);
    await s.context.setOffline(true);
    await s.page.reload();
    // The app and the survey come from the service worker's copy, in the browser's language.
    await s.page.getByRole('heading', { name: 'Hábitos cotidianos (preguntas condicionales, inglés y español)' }).waitFor();
    assert.equal(await s.page.evaluate(() => document.documentElement.lang), 'es');
    assert.equal(await s.page.getByTestId('language').inputValue(), 'es');
    await answerInSpanish(s.page);
    await s.page.getByRole('button', { name: 'Enviar', exact: true }).click();
    const waiting = s.page.getByTestId('form-waiting');
    await waiting.getByRole('heading', { name: 'En espera de envío' }).waitFor();
    assert.match(await s.page.getByTestId('announcer').textContent(), /Sin conexión/);
    await screenshot(s.page, 'offline-waiting');
    // Only the masked upload waits, under its token.
    const kept = assertNothingKept(await readDeviceStorage(s.page), RAW_NUMBERS, 'waiting');
    assert.equal(kept.length, 1);
    assert.equal(kept[0].survey, SURVEY);
    assert.equal(kept[0].destinations[0].upload.values.length, 16 + 488);
    assert.deepEqual(await uploads(s), [], 'nothing reached the service while offline');

    // The connection returns: the `online` event sends it and the receipt shows.
    await s.context.setOffline(false);
    await s.page.getByRole('heading', { name: 'Gracias: se recibieron sus respuestas enmascaradas' }).waitFor();
    const received = await uploads(s);
    assert.equal(received.length, 1, 'exactly one upload');
    assert.equal(received[0].body.token, kept[0].token);
    assert.deepEqual(received[0].body.values, kept[0].destinations[0].upload.values);
    assert.deepEqual(assertNothingKept(await readDeviceStorage(s.page), RAW_NUMBERS, 'sent'), []);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('an upload that waited is sent on the next visit; a discarded one never is', async () => {
  const s = await setup({ locale: 'es-ES' });
  try {
    await openOnceOnline(s);
    await s.context.setOffline(true);
    // Two submissions wait: the second is discarded from the list on the next visit.
    for (let i = 0; i < 2; i += 1) {
      await s.page.reload();
      await answerInSpanish(s.page);
      await s.page.getByRole('button', { name: 'Enviar', exact: true }).click();
      await s.page.getByTestId('form-waiting').waitFor();
    }
    const tokens = assertNothingKept(await readDeviceStorage(s.page), RAW_NUMBERS, 'two waiting').map((w) => w.token);
    assert.equal(tokens.length, 2);
    // Next visit, still offline: both are listed, with Send now and Discard.
    await s.page.goto(`${s.server.base}/#/participate`);
    const items = s.page.getByTestId('waiting-item');
    await items.nth(1).waitFor();
    assert.equal(await items.count(), 2);
    await items.nth(1).getByRole('button', { name: 'Descartar' }).click();
    await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=waiting-item]').length === 1);
    const left = assertNothingKept(await readDeviceStorage(s.page), RAW_NUMBERS, 'one discarded');
    assert.equal(left.length, 1);
    // Online again, on a fresh visit (no page of the app open while the connection returns): the
    // page sends what waits as it opens, and shows its receipt.
    await s.page.goto('about:blank');
    await s.context.setOffline(false);
    await s.page.goto(`${s.server.base}/#/participate`);
    await s.page.getByTestId('waiting-uploads').getByRole('heading', { name: 'Gracias: se recibieron sus respuestas enmascaradas' }).waitFor();
    const received = await uploads(s);
    assert.deepEqual(received.map((u) => u.body.token), [left[0].token], 'only the kept upload, once');
    assert.deepEqual(assertNothingKept(await readDeviceStorage(s.page), RAW_NUMBERS, 'sent'), []);
    await screenshot(s.page, 'offline-next-visit');
  } finally {
    await s.close();
  }
});

test('a waiting upload edited in storage to send elsewhere is refused, never sent, and can be discarded', async () => {
  const s = await setup({ locale: 'es-ES' });
  try {
    await openOnceOnline(s);
    await s.context.setOffline(true);
    await s.page.reload();
    await answerInSpanish(s.page);
    await s.page.getByRole('button', { name: 'Enviar', exact: true }).click();
    await s.page.getByTestId('form-waiting').waitFor();
    // The attack: someone with the device rewrites the stored entry's upload address.
    const evil = `http://evil.example/api/surveys/${SURVEY}/uploads`;
    await s.page.evaluate(async (url) => {
      const done = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
      const db = await done(indexedDB.open('orthomask'));
      const store = db.transaction('outbox', 'readwrite').objectStore('outbox');
      const [key] = await done(store.getAllKeys());
      const entry = JSON.parse(await done(store.get(key)));
      entry.destinations[0].url = url;
      await done(store.put(JSON.stringify(entry), key));
      db.close();
    }, evil);
    // The next visit, online: the entry fails the deployment's checks and is not sent.
    await s.page.goto('about:blank');
    await s.context.setOffline(false);
    await s.page.goto(`${s.server.base}/#/participate`);
    const panel = s.page.getByTestId('waiting-uploads');
    const alert = panel.getByRole('alert').filter({ hasText: 'evil.example' });
    await alert.waitFor();
    assert.match(await alert.textContent(), /^El envío en espera no se envió: .*not one of this deployment's services/);
    assert.deepEqual(await uploads(s), [], 'nothing reached the service');
    assert.ok(!s.record.requests.some((r) => r.url.includes('evil.example')), 'nothing went to the foreign address');
    // It stays until the participant discards it; then nothing of it is left.
    assert.equal(assertNothingKept(await readDeviceStorage(s.page), RAW_NUMBERS, 'refused').length, 1);
    await panel.getByRole('button', { name: 'Descartar' }).click();
    await panel.waitFor({ state: 'detached' });
    assert.deepEqual(assertNothingKept(await readDeviceStorage(s.page), RAW_NUMBERS, 'discarded'), []);
  } finally {
    await s.close();
  }
});

test('the language switcher changes every text and keeps the answers; the form is keyboard-usable', async () => {
  const s = await setup({ locale: 'es-MX', viewport: { width: 375, height: 740 } });
  try {
    await s.page.goto(`${s.server.base}/#/participate?survey=${SURVEY}`);
    await s.page.getByRole('button', { name: 'Empezar la encuesta' }).waitFor();
    await s.page.getByRole('checkbox').check();
    await s.page.getByRole('button', { name: 'Empezar la encuesta' }).click();
    await s.page.getByRole('radio', { name: 'Sí', exact: true }).check();
    // The app's frame speaks the survey's language too.
    const nav = s.page.getByRole('navigation', { name: 'Principal' });
    await nav.getByRole('link', { name: 'Responder una encuesta' }).waitFor();
    assert.equal(await s.page.locator('footer').textContent(), 'Orthomask: recogida de datos de encuestas que protege la privacidad mediante el triple enmascaramiento matricial.');
    // Switch by keyboard: focus the select, choose English.
    await s.page.getByLabel('Idioma').focus();
    await s.page.getByLabel('Idioma').selectOption('en');
    await s.page.getByRole('button', { name: 'Next' }).waitFor();
    assert.equal(await s.page.evaluate(() => document.documentElement.lang), 'en');
    await s.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Take a survey' }).waitFor();
    assert.ok(await s.page.getByRole('radio', { name: 'Yes', exact: true }).isChecked(), 'the answer stays');
    await s.page.getByRole('button', { name: 'Next' }).focus();
    await s.page.keyboard.press('Enter');
    await s.page.getByText('How many cigarettes do you smoke on a typical day?').waitFor();
    // An error in the chosen language, announced.
    await s.page.locator('input[type=number]').fill('0');
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('alert').filter({ hasText: 'enter a whole number from 1 to 60' }).waitFor();
    await s.page.getByLabel('Language').selectOption('es');
    await s.page.getByRole('alert').filter({ hasText: 'escriba un número entero de 1 a 60' }).waitFor();
    assert.match(await s.page.getByTestId('announcer').textContent(), /Pregunta 2: escriba un número entero de 1 a 60/);
    // Phone width: nothing wider than the screen.
    assert.ok(await s.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'fits 375px');
    // Leaving the participant page, the app's other pages (English) have an English frame again.
    await s.page.getByRole('navigation', { name: 'Principal' }).getByRole('link', { name: 'Inicio' }).click();
    await s.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Home' }).waitFor();
    assert.equal(await s.page.evaluate(() => document.documentElement.lang), 'en');
  } finally {
    await s.close();
  }
});

test("the service worker keeps exactly the built app's files", async () => {
  const sw = await readFile(join(dist, 'sw.js'), 'utf8');
  const listed = JSON.parse(sw.match(/const APP_FILES = (\[[^\]]*\]);/)[1].replace(/'/g, '"').replace(/,\s*\]/, ']'));
  async function files(dir) {
    const out = [];
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) out.push(...await files(p)); else out.push(relative(dist, p));
    }
    return out;
  }
  const built = (await files(dist)).filter((f) => f !== 'sw.js').sort();
  assert.deepEqual(listed.filter((f) => f !== './').sort(), built);
});
