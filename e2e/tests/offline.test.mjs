// The participant form in the field (issue 13, issue 20 §6): installable and usable offline, in
// the participant's language, with questions that follow the answers — and nothing that carries
// key material kept on the device. Against the mock deployment (e2e/server.mjs), with the
// browser context really offline (Playwright's setOffline):
// * a participant whose browser prefers Spanish opens the branching survey online, loses the
//   connection WITHOUT reloading, answers in Spanish through the branches, sees "waiting to
//   send" — only the masked upload waits, in IndexedDB, and no device key, invitation or other
//   upload's credential is anywhere — and gets the receipt when the connection returns; exactly
//   one upload reached the service;
// * reloaded offline, the page does not open the survey (nothing of it is kept) and says so in one
//   line, with the uploads that wait; a discarded one is never sent, the other goes out on the
//   next visit online — and when its cohort is then left out (someone sent invalid data), the
//   list, which asked with the nonce of the credential the stored upload kept, says so and asks
//   to answer again through the link;
// * a waiting upload edited in storage to send elsewhere is refused before anything is sent;
// * the service worker keeps no survey offer, and forgets the offers an earlier version kept;
// * the service worker's list of app files is the built app;
// * the catalogues' language follows the switcher and the answers stay.
// IndexedDB, localStorage, sessionStorage, cookies and the Cache API are read whole at every
// step (e2e/device-storage.mjs): no answer and no key material out of place is kept anywhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { serviceWorkerLists as builtLists } from '../built-app.mjs';
import { setup, screenshot, assertDeviceClean, readDeviceStorage, dist, mode, uploads, offers, fates, HANG_GUARD_MS } from '../lib.mjs';

const SURVEY = 'habits-branching';
// Distinctive answers (none is a number of the definition): cigarettes, sleep, drinks per week.
const RAW_NUMBERS = [37, 6.75, 9];

/** Open the survey online in `page`, with the service worker in control (the app's files kept). */
async function openOnline(s, page = s.page) {
  await page.goto(`${s.server.base}/#/participate?survey=${SURVEY}`);
  await page.evaluate(() => navigator.serviceWorker.ready);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  await page.getByRole('checkbox').waitFor();
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

/** Answer offline and send: the masked upload waits. */
async function answerAndWait(page) {
  await answerInSpanish(page);
  await page.getByRole('button', { name: 'Enviar', exact: true }).click();
  await page.getByTestId('form-waiting').waitFor();
}

/** The built service worker's lists, with the names of the files a participant's page never loads. */
async function serviceWorkerLists() {
  const { cache, files, lazy } = await builtLists(dist);
  return { cache, files, lazy: lazy.map((l) => l.file) };
}

/**
 * The Cache API holds exactly the app's files and the worker's own script (which a page it
 * controls reads its build from, issue 25), in the worker's one cache (issue 20 §6): no survey
 * offer, nothing of the API, nothing an earlier version kept. (assertDeviceClean checks the
 * caches for what no deployment may keep; this is what this one keeps.)
 */
async function onlyAppFilesCached(s) {
  const { caches } = await readDeviceStorage(s.page);
  const { cache, files, lazy } = await serviceWorkerLists();
  assert.deepEqual(Object.keys(caches), [cache], 'caches');
  const urls = caches[cache].map((e) => e.url).sort();
  // A participant's page: the whole app's module and worker are never fetched, so never kept.
  const kept = [...files.filter((f) => !lazy.includes(f)), 'sw.js'];
  assert.deepEqual(urls, kept.map((f) => new URL(f, `${s.server.base}/`).href).sort(), 'cached');
}

test('offline in Spanish through the branches, without reloading: the masked upload waits, then goes out once with its receipt', async () => {
  const s = await setup({ locale: 'es-ES' });
  try {
    await openOnline(s);
    await s.context.setOffline(true);
    // The form opened online keeps working offline while the page stays open.
    assert.equal(await s.page.evaluate(() => document.documentElement.lang), 'es');
    assert.equal(await s.page.getByTestId('language').inputValue(), 'es');
    await answerAndWait(s.page);
    assert.match(await s.page.getByTestId('announcer').textContent(), /Sin conexión/);
    await screenshot(s.page, 'offline-waiting');
    // Only the masked upload waits, under its token, with its own credential; the offer's device
    // key is nowhere on the device.
    const kept = await assertDeviceClean(s.page, RAW_NUMBERS, 'waiting', s.secrets);
    assert.equal(kept.length, 1);
    assert.equal(kept[0].survey, SURVEY);
    assert.equal(kept[0].destinations[0].upload.values.length, 16 + 488);
    assert.equal(s.secrets.deviceKeys.size, 1, 'the check knew the device key');
    await onlyAppFilesCached(s);
    assert.deepEqual(await uploads(s), [], 'nothing reached the service while offline');

    // The connection returns: the `online` event sends it and the receipt shows.
    await s.context.setOffline(false);
    await s.page.getByRole('heading', { name: 'Gracias: se recibieron sus respuestas enmascaradas' }).waitFor();
    const received = await uploads(s);
    assert.equal(received.length, 1, 'exactly one upload');
    assert.equal(received[0].body.token, kept[0].token);
    assert.deepEqual(received[0].body.values, kept[0].destinations[0].upload.values);
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'sent', s.secrets), []);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('reloaded offline, a survey does not open and the page says why; a discarded upload is never sent, the other goes out on the next visit, and its spoilt cohort is reported', async () => {
  const s = await setup({ locale: 'es-ES' });
  try {
    // Two forms opened online in two tabs; both answered offline: two uploads wait.
    const other = await s.context.newPage();
    await openOnline(s);
    await openOnline(s, other);
    await s.context.setOffline(true);
    await answerAndWait(s.page);
    await answerAndWait(other);
    // Leave the app before closing the tab: closing a tab under emulated offline fires `online`
    // in it first, and it would resend its in-memory upload (see the storage-edit test below).
    await other.goto('about:blank');
    await other.close();
    const tokens = (await assertDeviceClean(s.page, RAW_NUMBERS, 'two waiting', s.secrets)).map((w) => w.token);
    assert.equal(tokens.length, 2);
    // Reloaded without a connection: the app opens from the service worker, the survey does not
    // (nothing of it is kept on the device) — one clear line, and the uploads that wait.
    await s.page.reload();
    const needs = s.page.getByTestId('needs-connection');
    await needs.waitFor();
    assert.equal(
      (await needs.getByRole('status').textContent()),
      'Esta encuesta necesita conexión para abrirse; nada de lo que respondió se guarda en este dispositivo.',
    );
    assert.equal(await s.page.getByRole('checkbox').count(), 0, 'no form');
    const items = s.page.getByTestId('waiting-item');
    await items.nth(1).waitFor();
    assert.equal(await items.count(), 2);
    await screenshot(s.page, 'offline-reloaded');
    // Discarded: never sent, and nothing of it is left.
    await items.nth(1).getByRole('button', { name: 'Descartar' }).click();
    await s.page.waitForFunction(() => document.querySelectorAll('[data-testid=waiting-item]').length === 1);
    const left = await assertDeviceClean(s.page, RAW_NUMBERS, 'one discarded', s.secrets);
    assert.equal(left.length, 1);
    // Chromium's emulated offline flips a page to online as it unloads (the reload above, the
    // other tab leaving), and a form rightly sends its in-memory upload on `online`: on a loaded
    // machine such a send sometimes gets out before the page is gone (measured: one of the two
    // tokens, or the kept one, arrived during the "offline" phase; a phone without signal sends
    // nothing). What this test promises is about what happens from here: the discarded upload
    // never leaves, the kept one leaves once.
    const sentWhileEmulatedOffline = (await uploads(s)).length;
    const sentFromHere = async () => (await uploads(s)).slice(sentWhileEmulatedOffline);
    // Online again, on a fresh visit (no page of the app open while the connection returns): the
    // page sends what waits as it opens, and shows its receipt.
    await s.page.goto('about:blank');
    await s.context.setOffline(false);
    await s.page.goto(`${s.server.base}/#/participate`);
    const panel = s.page.getByTestId('waiting-uploads');
    await panel.getByRole('heading', { name: 'Gracias: se recibieron sus respuestas enmascaradas' }).waitFor();
    const received = await sentFromHere();
    assert.deepEqual(received.map((u) => u.body.token), [left[0].token], 'only the kept upload, once');
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'sent', s.secrets), []);
    await screenshot(s.page, 'offline-next-visit');
    // Its cohort is then left out (someone in it sent invalid data): only masked numbers were
    // kept, so the list cannot send the answers again — it says so and asks to answer again.
    await mode(s, { spoil: { survey: SURVEY, cohort: 0 } });
    const leftOut = panel.getByTestId('waiting-left-out');
    await leftOut.waitFor({ timeout: HANG_GUARD_MS });
    assert.match(await leftOut.textContent(), /^Alguien de este grupo envió datos no válidos, así que el grupo quedó fuera de los resultados.*responda otra vez mediante el enlace que recibió\.$/);
    assert.equal((await sentFromHere()).length, 1, 'nothing was sent again');
    // The list asked with the nonce of the credential the stored upload kept (issue 43 §6).
    const nonce = left[0].destinations[0].upload.credential.nonce;
    const asked = await fates(s);
    assert.ok(asked.length > 0 && asked.every((f) => f.method === 'POST' && f.nonce === nonce && f.holder), JSON.stringify(asked));
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('reloaded offline, the survey opens again on "Try again" once the connection is back', async () => {
  const s = await setup({ locale: 'es-ES' });
  try {
    await openOnline(s);
    await s.context.setOffline(true);
    await s.page.reload();
    const needs = s.page.getByTestId('needs-connection');
    await needs.waitFor();
    // Still offline: trying again fails the same way, and takes no place.
    await needs.getByRole('button', { name: 'Intentar de nuevo' }).click();
    await needs.waitFor();
    await s.context.setOffline(false);
    await s.page.getByTestId('needs-connection').getByRole('button', { name: 'Intentar de nuevo' }).click();
    await s.page.getByRole('checkbox', { name: 'He leído esto y acepto participar.' }).waitFor();
    assert.equal((await offers(s)).length, 2, 'a place taken online, then again on the participant\'s request');
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'reopened', s.secrets), []);
  } finally {
    await s.close();
  }
});

test('a waiting upload edited in storage to send elsewhere is refused, never sent, and can be discarded', async () => {
  const s = await setup({ locale: 'es-ES' });
  try {
    await openOnline(s);
    await s.context.setOffline(true);
    await answerAndWait(s.page);
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
    // The next visit, online, in a browser started again: the entry fails the deployment's
    // checks and is not sent. The answering tab leaves the app first, still offline: while it
    // lives it rightly resends its own in-memory upload (to the genuine address) when the
    // connection returns, and closing a browser under emulated offline fires `online` in its
    // pages before they unload (seen: the resend reached the mock, also after the tab had left
    // for about:blank, when a loaded machine tore the old page down late). This test is about
    // what is read back from storage, so that first browser's uploads are cut off at its end.
    await s.context.route('**/uploads', (route) => route.abort());
    await s.page.goto('about:blank');
    await s.restart();
    await s.page.goto(`${s.server.base}/#/participate`);
    const panel = s.page.getByTestId('waiting-uploads');
    const alert = panel.getByRole('alert').filter({ hasText: 'evil.example' });
    await alert.waitFor();
    assert.match(await alert.textContent(), /^El envío en espera no se envió: .*not one of this deployment's services/);
    assert.deepEqual(await uploads(s), [], 'nothing reached the service');
    assert.ok(!s.record.requests.some((r) => r.url.includes('evil.example')), 'nothing went to the foreign address');
    // It stays until the participant discards it; then nothing of it is left.
    assert.equal((await assertDeviceClean(s.page, RAW_NUMBERS, 'refused', s.secrets)).length, 1);
    await panel.getByRole('button', { name: 'Descartar' }).click();
    await panel.waitFor({ state: 'detached' });
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'discarded', s.secrets), []);
  } finally {
    await s.close();
  }
});

test('the service worker keeps no survey offer, and forgets the offers an earlier version kept', async () => {
  const s = await setup();
  try {
    // Before this worker is installed: what an earlier version kept (issue 20 §6) — a survey
    // offer with its invitation in the address and its device key in the body, in two earlier
    // versions' caches and, as if kept by mistake, in this version's.
    const oldKey = 'ab'.repeat(32);
    const oldInvite = 'an-invitation-an-old-worker-kept';
    await s.page.goto(`${s.server.base}/icon.svg`);
    await s.page.evaluate(async ([key, invite, current]) => {
      const body = JSON.stringify({ signed: { definition: JSON.stringify({ masking: { right_mask_key: key } }) } });
      const offer = () => new Response(body, { headers: { 'content-type': 'application/json' } });
      await (await caches.open('orthomask-v1')).put(`/api/surveys/leaps-demo/definition?invite=${invite}`, offer());
      await (await caches.open('orthomask-v2')).put('/api/surveys/leaps-demo/definition', offer());
      await (await caches.open(current)).put('/api/surveys/leaps-demo/definition', offer());
    }, [oldKey, oldInvite, (await serviceWorkerLists()).cache]);
    s.secrets.deviceKeys.add(oldKey);
    s.secrets.invites.add(oldInvite);
    await openOnline(s, s.page);
    // This visit took a place (POST, passed through) and none of it, nor of the earlier
    // version's, is kept.
    await onlyAppFilesCached(s);
    assert.deepEqual(await assertDeviceClean(s.page, [], 'after activation', s.secrets), []);
    assert.equal(s.secrets.deviceKeys.size, 2);
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
  const listed = (await serviceWorkerLists()).files;
  async function files(dir) {
    const out = [];
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) out.push(...await files(p)); else out.push(relative(dist, p));
    }
    return out;
  }
  // The Brotli and gzip encodings beside the files are the same files on the wire (issue 25).
  const built = (await files(dist)).filter((f) => f !== 'sw.js' && !/\.(br|gz)$/.test(f)).sort();
  assert.deepEqual(listed.filter((f) => f !== './').sort(), built);
});
