// The participant form end to end against the mock deployment (e2e/server.mjs): a place taken
// with POST and the invitation in the JSON body (issue 20 §7), consent first, validation
// announced, the "what leaves your device" panel, retry with one idempotency token and one
// credential, a verified receipt — and no raw answer anywhere outside the page: not in any
// request (URL, header or body), not in storage, not in the console; no key material kept on the
// device (issue 20 §6). A cohort left out because someone sent invalid data, or regrouped because
// too few had answered in it (issue 43 §3), is answered again, once, in a new cohort, the page
// saying which; its fate is asked with the nonce of the page's credential for that cohort, and
// told to nobody else (issue 43 §6). And the trust checks of issue 10 §3 and issue 20 §3
// (docs/threat-model.md, "forged survey definition"): a definition signed by another key, one
// that sends to a foreign origin, one below the policy's floors, or a link naming an address
// instead of a survey id is refused before the form shows, and a demonstration sends nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, screenshot, assertDeviceClean, numbersIn, mode, uploads, offers, fates, receiptCount, waitFor, HANG_GUARD_MS,
} from '../lib.mjs';

// Distinctive answers: none of these numbers may leave the page.
const ANSWERS = { delta: '1.37', age: '73', bbs: '41', adl: '61.5' };
const RAW_NUMBERS = [1.37, 73, 41, 61.5];
// A raw answer written as text: the number alone, not as digits inside another number.
const RAW_TEXT = ['1.37', '73', '41', '61.5'].map((t) => new RegExp(`(?<![0-9.])${t.replace('.', '\\.')}(?![0-9])`));

/** The collector's link to bundled survey `id` (the mock deployment signs it for itself). */
function surveyLink(s, id = 'leaps-demo', invite = null) {
  const query = invite === null ? '' : `&invite=${encodeURIComponent(invite)}`;
  return `${s.server.base}/#/participate?survey=${id}${query}`;
}

/** The body fields of every upload: the credential, the definition's digest and the app's build
 * digest travel with the masked values. */
const UPLOAD_FIELDS = ['build', 'cohort', 'credential', 'definition', 'survey', 'token', 'values'];
/** The place requests: POST, JSON, `{"invite": …}` or `{}`. */
const PLACE = /^\/api\/surveys\/[a-z0-9_-]+\/definition$/;
const isPlace = (r) => r.method === 'POST' && PLACE.test(new URL(r.url).pathname);

/** A place request (`isPlace`) carries the invitation and nothing else, and no query. */
function assertPlaceRequest(r, label) {
  assert.ok(Object.keys(JSON.parse(r.body)).every((k) => k === 'invite'), `${label}: place request ${r.body}`);
  assert.ok(!new URL(r.url).search, `${label}: a place request's address has no query`);
}

/** The fate requests (issue 43 §6): POST, JSON, `{"nonce": …}`. */
const FATE = /^\/api\/surveys\/[a-z0-9_-]+\/cohorts\/[0-9]+\/fate$/;
const isFate = (r) => r.method === 'POST' && FATE.test(new URL(r.url).pathname);

/** A fate request (`isFate`) carries a credential's nonce and nothing else, and no query. */
function assertFateRequest(r, label) {
  const body = JSON.parse(r.body);
  assert.deepEqual(Object.keys(body), ['nonce'], `${label}: fate request ${r.body}`);
  assert.match(body.nonce, /^[0-9a-f]{32}$/, `${label}: a credential's nonce`);
  assert.ok(!new URL(r.url).search, `${label}: a fate request's address has no query`);
}

/** Every fate question the mock collector was asked (`/__mock/fates`) was the page's POST with
 * the nonce of the credential its upload to that cohort carried: `nonces` maps cohort → nonce. */
function assertAskedWithNonces(asked, nonces, label) {
  assert.ok(asked.length > 0, `${label}: asked`);
  for (const f of asked) {
    assert.equal(f.method, 'POST', `${label}: ${JSON.stringify(f)}`);
    assert.equal(f.nonce, nonces[f.cohort], `${label}: cohort ${f.cohort} asked with its credential's nonce`);
    assert.ok(f.holder, `${label}: a nonce the collector issued for cohort ${f.cohort}`);
  }
}

/// Pointer answering: check the radio or fill the field, then click Next/Review.
function byPointer(page) {
  const next = () => page.getByRole('button', { name: /^(Next|Review)$/ }).click();
  return {
    radio: async (label) => { await page.getByRole('radio', { name: label, exact: true }).check(); await next(); },
    number: async (value) => { await page.locator('input[type=number]').fill(value); await next(); },
  };
}

/// The LEAPS demo's eight answers, given one screen at a time by `radio` and `number`.
async function answerLeaps(page, { radio, number } = byPointer(page)) {
  await radio('No');
  await radio('Yes');
  await number(ANSWERS.delta);
  await number(ANSWERS.age);
  await number(ANSWERS.bbs);
  await radio('Yes');
  await radio('No');
  await number(ANSWERS.adl);
}

function assertNoRawData(s, label) {
  for (const r of s.record.requests) {
    let parsed = null;
    try { parsed = JSON.parse(r.body); } catch { /* not JSON */ }
    const { url } = r;
    for (const t of RAW_TEXT) {
      assert.ok(!t.test(url), `${label}: ${t} in the URL ${r.url}`);
      // JSON bodies are checked number by number below (their random token may hold any digits).
      if (!parsed) assert.ok(!t.test(r.body), `${label}: ${t} in a request body to ${r.url}`);
    }
    if (parsed && isPlace(r)) {
      assertPlaceRequest(r, label);
    } else if (parsed && isFate(r)) {
      assertFateRequest(r, label);
    } else if (parsed) {
      // Only the fields of an Upload: no answer can hide in another field.
      assert.deepEqual(Object.keys(parsed).sort(), UPLOAD_FIELDS, `${label}: body fields`);
      // A basic-protocol credential also names its cohort's device key digest (issue 43), never
      // the key itself.
      const fields = Object.keys(parsed.credential).sort();
      assert.ok(
        ['cohort,expires_at,nonce,signature,survey', 'cohort,expires_at,key_digest,nonce,signature,survey'].includes(fields.join(',')),
        `${label}: credential fields ${fields}`,
      );
      if (parsed.credential.key_digest !== undefined) assert.match(parsed.credential.key_digest, /^[0-9a-f]{64}$/, `${label}: key digest`);
      // The build the page runs (issue 27 §2): the digest of the served dist/, computed by the
      // mock server from the files (e2e/server.mjs appBuild), not by the app.
      assert.equal(parsed.build, s.server.build, `${label}: the upload names the served build`);
      for (const v of numbersIn(parsed)) {
        for (const raw of RAW_NUMBERS) assert.ok(Math.abs(v - raw) > 1e-9, `${label}: raw answer ${raw} sent to ${r.url}`);
      }
    }
  }
  for (const line of s.record.console) {
    for (const t of RAW_TEXT) assert.ok(!t.test(line), `${label}: console shows ${t}: ${line}`);
  }
}

test('a participant submits through transient failures and gets a verified receipt; no raw answer leaves the page', async () => {
  const s = await setup();
  try {
    // An invitation token with characters that must be percent-encoded (and no digits, which the
    // raw-answer checks look for in URLs).
    const invite = 'inv tok&en=/é';
    await s.page.goto(surveyLink(s, 'leaps-demo', invite));
    // Consent first: the start button is disabled until the box is ticked.
    const start = s.page.getByRole('button', { name: 'Start the survey' });
    await start.waitFor();
    assert.equal(await start.isDisabled(), true);
    await screenshot(s.page, 'participate-consent');
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await start.click();
    // Validation: an empty required answer and an out-of-range age are announced.
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('alert').filter({ hasText: 'this question needs an answer' }).waitFor();
    const announcer = s.page.getByTestId('announcer');
    assert.match(await announcer.textContent(), /Question 1: this question needs an answer/);
    await s.page.getByRole('radio', { name: 'No', exact: true }).check();
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('radio', { name: 'Yes', exact: true }).check();
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.locator('input[type=number]').fill(ANSWERS.delta);
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.locator('input[type=number]').fill('150');
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('alert').filter({ hasText: 'enter a whole number from 18 to 100' }).waitFor();
    assert.match(await announcer.textContent(), /Question 4: enter a whole number from 18 to 100/);
    assert.equal(await s.page.locator('input[type=number]').getAttribute('aria-invalid'), 'true');
    await s.page.locator('input[type=number]').fill(ANSWERS.age);
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.locator('input[type=number]').fill(ANSWERS.bbs);
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('radio', { name: 'Yes', exact: true }).check();
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('radio', { name: 'No', exact: true }).check();
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.locator('input[type=number]').fill(ANSWERS.adl);
    await s.page.getByRole('button', { name: 'Review' }).click();
    // The panel shows the 512 masked numbers and why nobody can read them.
    const panel = s.page.getByRole('region', { name: 'What leaves your device' });
    await panel.waitFor();
    assert.match(await panel.textContent(), /padded with 503 random numbers/);
    const shown = (await s.page.getByTestId('masked-vector').textContent()).split(',').map(Number);
    assert.equal(shown.length, 512);
    await screenshot(s.page, 'participate-review');
    // Two 503s, then success on the third attempt with the same token.
    await mode(s, { fail_next: 2 });
    await s.page.getByRole('button', { name: 'Send' }).click();
    const hash = s.page.getByTestId('receipt-hash');
    await hash.waitFor();
    const received = await uploads(s);
    assert.equal(received.length, 3, 'two failed attempts and one success');
    assert.equal(new Set(received.map((u) => u.body.token)).size, 1, 'one idempotency token for every retry');
    assert.equal(new Set(received.map((u) => JSON.stringify(u.body.values))).size, 1, 'retries resend the same vector');
    assert.equal(new Set(received.map((u) => JSON.stringify(u.body.credential))).size, 1, 'one credential for every retry');
    const body = received[0].body;
    assert.equal(body.values.length, 512);
    assert.deepEqual(Object.keys(body).sort(), UPLOAD_FIELDS);
    // The credential is the one the collector issued with this survey's offer (the mock refuses
    // anything else with 401, so the receipt proves it was accepted).
    assert.equal(body.credential.survey, 'leaps-demo');
    assert.equal(body.credential.cohort, 0);
    // The page took a place in the survey by id from this origin with POST, the invitation intact
    // in the JSON body and in no address (issue 20 §7).
    assert.deepEqual(await offers(s), [{ method: 'POST', survey: 'leaps-demo', invite, cohort: 0 }]);
    const places = s.record.requests.filter((r) => r.url.includes('/definition'));
    assert.deepEqual(places.map((r) => [r.method, r.url]), [['POST', `${s.server.base}/api/surveys/leaps-demo/definition`]]);
    assert.match(places[0].headers['content-type'], /^application\/json/);
    assert.deepEqual(JSON.parse(places[0].body), { invite });
    for (const r of s.record.requests) {
      for (const form of [invite, encodeURIComponent(invite), 'inv%20tok', 'inv+tok']) assert.ok(!r.url.includes(form), `the invitation in the address ${r.url}`);
    }
    // The receipt's hash was verified by the page against Upload::hash; the mock computed it independently.
    const { uploadHash } = await import('../server.mjs');
    assert.equal(await hash.textContent(), uploadHash(body));
    // The shown vector is the uploaded one (to the shown 6 significant digits).
    shown.forEach((v, i) => assert.ok(Math.abs(v - body.values[i]) <= 1e-5 * Math.abs(body.values[i]) + 1e-9, `entry ${i}`));
    // Save the receipt.
    const [download] = await Promise.all([s.page.waitForEvent('download'), s.page.getByRole('button', { name: 'Save receipt' }).click()]);
    assert.equal(download.suggestedFilename(), 'orthomask-receipt-leaps-demo.json');
    await screenshot(s.page, 'participate-receipt');
    // Nothing raw anywhere.
    assertNoRawData(s, 'happy path');
    // Nothing of the answers and no key material is kept: the outbox is empty once sent, the
    // caches hold the app; the offer's device key, the invitation, the credential and the token
    // are nowhere on the device.
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'after sending', s.secrets), []);
    assert.equal(s.secrets.deviceKeys.size, 1, 'the check knew the device key');
    assert.deepEqual([...s.secrets.invites], [invite]);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('when the service stays down the participant sees why, keeps every answer, and a retry succeeds with the same token', async () => {
  const s = await setup();
  try {
    await mode(s, { down: true });
    await s.page.goto(surveyLink(s));
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await answerLeaps(s.page);
    await s.page.getByRole('button', { name: 'Send' }).click();
    const alert = s.page.getByRole('alert').filter({ hasText: 'did not go through after 4 attempts' });
    await alert.waitFor();
    assert.match(await alert.textContent(), /nothing was lost/);
    assert.match(await alert.textContent(), /down for maintenance/);
    await screenshot(s.page, 'participate-failed');
    const failed = await uploads(s);
    assert.equal(failed.length, 4);
    // The answers are still there.
    await s.page.getByRole('button', { name: 'Change my answers' }).click();
    assert.equal(await s.page.locator('input[type=number]').inputValue(), ANSWERS.adl);
    await s.page.getByRole('button', { name: 'Review' }).click();
    await s.page.getByTestId('masked-vector').waitFor();
    // Unchanged answers keep their upload and token (a failed send may have reached the service):
    // the service comes back, the retry goes through, and every attempt carried the same token.
    await mode(s, { down: false });
    await s.page.getByRole('button', { name: /^(Send|Try again)$/ }).click();
    await s.page.getByTestId('receipt-hash').waitFor();
    const all = await uploads(s);
    assert.equal(all.length, 5);
    assert.equal(new Set(all.map((u) => u.body.token)).size, 1);
    assert.equal(new Set(all.map((u) => JSON.stringify(u.body.credential))).size, 1, 'the same credential on every try');
    assert.deepEqual(new Set(all.map((u) => JSON.stringify(u.body.values))).size, 1);
    assertNoRawData(s, 'failure path');
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'failure path', s.secrets), []);
  } finally {
    await s.close();
  }
});

test('"Try again" after a failure resends the same upload with the same token', async () => {
  const s = await setup();
  try {
    await mode(s, { down: true });
    await s.page.goto(surveyLink(s));
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await answerLeaps(s.page);
    await s.page.getByRole('button', { name: 'Send' }).click();
    await s.page.getByRole('button', { name: 'Try again' }).waitFor();
    await mode(s, { down: false });
    await s.page.getByRole('button', { name: 'Try again' }).click();
    await s.page.getByTestId('receipt-hash').waitFor();
    const all = await uploads(s);
    assert.equal(all.length, 5);
    assert.equal(new Set(all.map((u) => u.body.token)).size, 1);
    assertNoRawData(s, 'try again');
  } finally {
    await s.close();
  }
});

test('a provider at its connection limit (503, Retry-After) is asked again, and the upload is stored once', async () => {
  const s = await setup();
  try {
    await mode(s, { upload_busy: 2 });
    await s.page.goto(surveyLink(s));
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await answerLeaps(s.page);
    await s.page.getByRole('button', { name: 'Send' }).click();
    await s.page.getByTestId('receipt-hash').waitFor();
    const all = await uploads(s);
    assert.deepEqual(all.map((u) => u.busy ?? 201), [503, 503, 201], 'two busy answers, then the receipt');
    assert.equal(new Set(all.map((u) => u.body.token)).size, 1, 'one token: the service stores it once');
    assert.equal(await receiptCount(s), 1, 'one upload stored');
    assertNoRawData(s, 'busy provider');
  } finally {
    await s.close();
  }
});

test('a busy collector (503, Retry-After) is asked for the place again, and the form opens', async () => {
  const s = await setup();
  try {
    await mode(s, { place_busy: 2 });
    await s.page.goto(surveyLink(s, 'leaps-demo', 'busy-collector-invitation'));
    await s.page.getByLabel('I have read this and agree to take part.').waitFor();
    const served = await offers(s);
    assert.deepEqual(served.map((o) => o.busy ?? o.cohort), [503, 503, 0], 'two refusals, then the place');
    assert.ok(served.every((o) => o.invite === 'busy-collector-invitation'));
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('a cohort left out because someone sent invalid data: the page takes a new place and sends the answers again, once', async () => {
  const s = await setup();
  try {
    const invite = 'spoilt-cohort-invitation';
    await s.page.goto(surveyLink(s, 'leaps-demo', invite));
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await answerLeaps(s.page);
    await s.page.getByRole('button', { name: 'Send' }).click();
    await s.page.getByTestId('receipt-hash').waitFor();
    const [first] = await uploads(s);
    assert.equal(first.body.cohort, 0);
    // The collector leaves cohort 0 out (someone in it sent invalid data) and reopens its
    // invitations; it is busy the first time the page asks (429, Retry-After), and asked again.
    await mode(s, { fate_busy: 1 });
    await mode(s, { spoil: { survey: 'leaps-demo', cohort: 0 } });
    // While the page stays open it learns the cohort's fate, takes a new place with the same
    // invitation, masks the answers still in memory afresh and sends them.
    await s.page.getByTestId('answered-again').waitFor();
    const announcer = s.page.getByTestId('announcer');
    assert.match(await announcer.textContent(), /^Someone in your group sent invalid data, so the group was left out of the results; your answers were sent again in a new group\./);
    await screenshot(s.page, 'participate-answered-again');
    assert.deepEqual(await offers(s), [
      { method: 'POST', survey: 'leaps-demo', invite, cohort: 0 },
      { method: 'POST', survey: 'leaps-demo', invite, cohort: 1 },
    ], 'a new place through the same invitation');
    let all = await uploads(s);
    assert.equal(all.length, 2);
    const second = all[1].body;
    assert.equal(second.cohort, 1);
    assert.equal(second.credential.cohort, 1);
    assert.notEqual(second.token, first.body.token, 'a new idempotency token');
    assert.notEqual(second.credential.nonce, first.body.credential.nonce, 'the new place\'s credential');
    assert.ok(second.values.every((v, i) => v !== first.body.values[i]), 'masked afresh: new noise, the new cohort\'s key');
    const { uploadHash } = await import('../server.mjs');
    assert.equal(await s.page.getByTestId('receipt-hash').textContent(), uploadHash(second));
    // The page went on asking after the busy answer, and asks about the new cohort now; it sent
    // nothing more.
    const asked = await waitFor(async () => {
      const all = await fates(s);
      return all.some((f) => f.cohort === 1) && all;
    }, 'a question about the new cohort', HANG_GUARD_MS / 1000, 500);
    assert.deepEqual(asked.filter((f) => f.cohort === 0).map((f) => f.status).slice(0, 2), [429, 200], 'asked again after 429');
    // Each question proved a place in the cohort asked about (issue 43 §6).
    assertAskedWithNonces(asked, { 0: first.body.credential.nonce, 1: second.credential.nonce }, 'spoilt');
    assert.equal(await s.page.getByText(/Too few people had answered/).count(), 0, 'the spoilt texts, not the regrouped ones');
    all = await uploads(s);
    assert.equal(all.length, 2, 'sent again exactly once');
    assertNoRawData(s, 'answered again');
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'answered again', s.secrets), []);
    assert.equal(s.secrets.deviceKeys.size, 2, "both cohorts' device keys were checked for");
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('a cohort regrouped because too few had answered in it: the page says so, not "invalid data", and sends the answers again in a new cohort, once', async () => {
  const s = await setup();
  try {
    const invite = 'regrouped-cohort-invitation';
    await s.page.goto(surveyLink(s, 'leaps-demo', invite));
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await answerLeaps(s.page);
    await s.page.getByRole('button', { name: 'Send' }).click();
    await s.page.getByTestId('receipt-hash').waitFor();
    const [first] = await uploads(s);
    assert.equal(first.body.cohort, 0);
    // The survey team closes cohort 0 with too few records to be masked while the survey still
    // takes participants (issue 43 §3): nothing of it is released and its invitations reopen.
    // The collector is busy for the page's next four place requests (every attempt of one
    // try), so the page shows why it answers again, then that the new place failed.
    await mode(s, { place_busy: 4 });
    await mode(s, { regroup: { survey: 'leaps-demo', cohort: 0 } });
    const taking = s.page.getByTestId('answering-again');
    await taking.waitFor();
    assert.equal(await taking.textContent(), 'Too few people had answered in your group for its answers to be masked, so nothing of it was used; your answers are still on this page and are masked afresh and sent in a new group…');
    const failed = s.page.getByRole('alert').filter({ hasText: 'could not be sent in a new group yet' });
    await failed.waitFor();
    assert.match(await failed.textContent(), /^Too few people had answered in your group for its answers to be masked, so nothing of it was used, and your answers could not be sent in a new group yet: .*HTTP 503/);
    await screenshot(s.page, 'participate-regrouped-failed');
    assert.equal((await uploads(s)).length, 1, 'nothing sent while no place was taken');
    // The participant tries again: a new place with the same invitation, the answers masked
    // afresh for it and sent.
    await s.page.getByRole('button', { name: 'Send my answers again' }).click();
    const note = s.page.getByTestId('answered-again');
    await note.waitFor();
    assert.equal(await note.textContent(), 'Too few people had answered in your earlier group for its answers to be masked, so nothing of it was used; your answers were sent again in a new group. This is your new receipt: the earlier one no longer counts.');
    assert.match(await s.page.getByTestId('announcer').textContent(), /^Too few people had answered in your group for its answers to be masked, so nothing of it was used; your answers were sent again in a new group\. Your new receipt is below\.$/);
    assert.equal(await s.page.getByText(/invalid data/).count(), 0, 'nobody is said to have sent invalid data');
    await screenshot(s.page, 'participate-regrouped');
    assert.deepEqual((await offers(s)).map((o) => [o.invite, o.busy ?? o.cohort]), [
      [invite, 0], [invite, 503], [invite, 503], [invite, 503], [invite, 503], [invite, 1],
    ], 'four busy answers, then a new place through the same invitation');
    let all = await uploads(s);
    assert.equal(all.length, 2);
    const second = all[1].body;
    assert.deepEqual([second.cohort, second.credential.cohort], [1, 1]);
    assert.notEqual(second.token, first.body.token, 'a new idempotency token');
    assert.notEqual(second.credential.nonce, first.body.credential.nonce, 'the new place\'s credential');
    const { uploadHash } = await import('../server.mjs');
    assert.equal(await s.page.getByTestId('receipt-hash').textContent(), uploadHash(second));
    // Every question about either cohort carried the nonce of the page's credential for it.
    const asked = await waitFor(async () => {
      const all = await fates(s);
      return all.some((f) => f.cohort === 1) && all;
    }, 'a question about the new cohort', HANG_GUARD_MS / 1000, 500);
    assert.ok(asked.some((f) => f.cohort === 0 && f.status === 200), 'the regrouped cohort\'s fate was told');
    assertAskedWithNonces(asked, { 0: first.body.credential.nonce, 1: second.credential.nonce }, 'regrouped');
    all = await uploads(s);
    assert.equal(all.length, 2, 'sent again exactly once');
    assertNoRawData(s, 'regrouped');
    assert.deepEqual(await assertDeviceClean(s.page, RAW_NUMBERS, 'regrouped', s.secrets), []);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('optional questions can be skipped, and share mode sends one additive share to each service', async () => {
  const s = await setup();
  try {
    await s.page.goto(surveyLink(s, 'wellbeing-optional'));
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await s.page.getByRole('radio', { name: 'No', exact: true }).check();
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('button', { name: 'Skip this question' }).click();
    await s.page.locator('input[type=number]').fill('7.25');
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.getByRole('button', { name: 'Skip this question' }).click();
    await s.page.getByRole('radio', { name: 'student' }).check();
    await s.page.getByRole('button', { name: 'Review' }).click();
    await s.page.getByTestId('masked-vector').waitFor();
    await s.page.getByRole('button', { name: 'Send' }).click();
    await s.page.getByTestId('receipt-hash').waitFor();
    const [one] = await uploads(s);
    // 1 + (1 + 1) + 1 + (1 + 1) + (3 + 1) answer columns, the QA column, 482 noise columns.
    assert.equal(one.body.values.length, 10 + 1 + 482);

    await s.page.goto(surveyLink(s, 'shares-demo'));
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await s.page.getByRole('radio', { name: 'Yes', exact: true }).check();
    await s.page.getByRole('button', { name: 'Next' }).click();
    await s.page.locator('input[type=number]').fill('73');
    await s.page.getByRole('button', { name: 'Review' }).click();
    const panel = s.page.getByRole('region', { name: 'What leaves your device' }).filter({ hasText: '3 random parts' });
    await panel.waitFor();
    // Issue 11 §4: what one service alone learns, as orthomask_survey::share_view computes it.
    assert.match(await panel.textContent(), /one part shows your answers at a signal-to-noise ratio below [0-9.e-]+ — as private as a Gaussian mechanism with ε = [0-9.e-]+ at δ = 1e-6/);
    await s.page.getByRole('button', { name: 'Send' }).click();
    await s.page.getByTestId('receipt-hash').first().waitFor();
    assert.equal(await s.page.getByTestId('receipt-hash').count(), 3);
    // Each receipt links to the list its own service publishes for the cohort.
    const lists = await s.page.getByTestId('receipt-list').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    assert.deepEqual(lists, [0, 1, 2].map((i) => `${s.server.base}/right/${i}/api/surveys/shares-demo/cohorts/0/receipts`));
    const shares = (await uploads(s)).slice(1);
    assert.deepEqual(shares.map((u) => u.endpoint), ['right/0', 'right/1', 'right/2']);
    // One credential, accepted once by each right-masking service.
    assert.equal(new Set(shares.map((u) => JSON.stringify(u.body.credential))).size, 1);
    // The shares add up to the padded record: age 73 at index 1, the QA constant 888 at index 2.
    const sum = shares[0].body.values.map((_, j) => shares.reduce((a, u) => a + u.body.values[j], 0));
    assert.ok(Math.abs(sum[1] - 73) < 1e-6 && Math.abs(sum[2] - 888) < 1e-6);
    for (const u of shares) assert.ok(Math.abs(u.body.values[1] - 73) > 1e-6, 'no single share holds the age');
    // Only the answers carry share noise; the QA constant (and the padding) are split evenly, x/3 per share.
    for (const u of shares) assert.ok(Math.abs(u.body.values[2] - 888 / 3) < 1e-9, 'QA constant not split evenly');
    await screenshot(s.page, 'participate-shares-receipt');
  } finally {
    await s.close();
  }
});

/// Press Tab (at most 60 times) until the focused element matches, and fail if it never does:
/// proves the element is reachable in the tab order.
async function tabTo(page, describe, matches) {
  for (let i = 0; i < 60; i += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(matches)) return;
  }
  assert.fail(`${describe} is not reachable with Tab`);
}

test('the whole form works from the keyboard alone', async () => {
  const s = await setup();
  try {
    await s.page.goto(surveyLink(s));
    await s.page.getByLabel('I have read this and agree to take part.').waitFor();
    const page = s.page;
    await tabTo(page, 'the consent box', () => document.activeElement?.type === 'checkbox');
    await page.keyboard.press('Space');
    await tabTo(page, 'the start button', () => document.activeElement?.textContent === 'Start the survey');
    await page.keyboard.press('Enter');
    const submit = () => tabTo(page, 'Next/Review', () => ['Next', 'Review'].includes(document.activeElement?.textContent));
    // A yes/no question: Tab into the radio group, arrow keys choose, then on to Next.
    const radio = async (label) => {
      await page.locator('legend').first().waitFor();
      await tabTo(page, 'a radio button', () => document.activeElement?.type === 'radio');
      await page.keyboard.press('Space');
      if (label === 'No') await page.keyboard.press('ArrowDown');
      const chosen = await page.evaluate(() => document.querySelector('input[type=radio]:checked')?.labels?.[0]?.textContent?.trim());
      assert.equal(chosen, label);
      await submit();
      await page.keyboard.press('Enter');
    };
    // A number question: Tab to the field, type, Enter submits the screen.
    const number = async (value) => {
      await tabTo(page, 'the number field', () => document.activeElement?.type === 'number');
      await page.keyboard.type(value);
      await page.keyboard.press('Enter');
    };
    await answerLeaps(page, { radio, number });
    await page.getByRole('region', { name: 'What leaves your device' }).waitFor();
    await tabTo(page, 'the send button', () => document.activeElement?.textContent === 'Send');
    await page.keyboard.press('Enter');
    await page.getByTestId('receipt-hash').waitFor();
    const [upload] = await uploads(s);
    assert.equal(upload.body.values.length, 512);
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

// ── Trust (issue 10 §3; docs/threat-model.md, "forged survey definition") ───────────────────────

/** Open `link`, wait for the refusal, and check that the form never showed. */
async function assertRefused(s, link, message) {
  await s.page.goto(link);
  const alert = s.page.getByRole('alert').filter({ hasText: message });
  await alert.waitFor();
  const text = await alert.textContent();
  assert.ok(!text.includes('\n'), `one line: ${text}`);
  assert.equal(await s.page.getByLabel('I have read this and agree to take part.').count(), 0, 'the consent form never shows');
  assert.equal(await s.page.getByRole('button', { name: 'Start the survey' }).count(), 0);
  return text;
}

/** No upload reached any service and the page sent no request with a body but its place requests (no answer in them). */
async function assertNothingSent(s, label) {
  assert.deepEqual(await uploads(s), [], `${label}: no upload`);
  for (const r of s.record.requests.filter(isPlace)) assertPlaceRequest(r, label);
  const sent = s.record.requests.filter((r) => (r.method !== 'GET' || r.body !== '') && !isPlace(r));
  assert.deepEqual(sent.map((r) => `${r.method} ${r.url}`), [], `${label}: no request carried anything`);
}

test('the mock services refuse an upload without a valid credential (so a receipt proves the page sent one) and a place taken by GET or a form', async () => {
  const s = await setup();
  try {
    const place = `${s.server.base}/api/surveys/leaps-demo/definition`;
    // Taking a place is a JSON POST (issue 20 §7): a GET (an <img src>) or a form post takes none.
    assert.equal((await fetch(place)).status, 405, 'GET');
    assert.equal((await fetch(place, { method: 'POST', body: 'invite=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status, 415, 'a form post');
    const offer = await (await fetch(place, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).json();
    const upload = { survey: 'leaps-demo', cohort: 0, token: 'A'.repeat(32), values: [1, 2, 3], build: s.server.build };
    const post = (body, path = '/api/surveys/leaps-demo/uploads') => fetch(`${s.server.base}${path}`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal((await post(upload)).status, 401, 'no credential');
    const tampered = { ...offer.credential, expires_at: offer.credential.expires_at + 1 };
    assert.equal((await post({ ...upload, credential: tampered })).status, 401, 'a credential changed after signing');
    assert.equal((await post({ ...upload, credential: offer.credential })).status, 201, 'the issued credential');
    assert.equal((await post({ ...upload, token: 'B'.repeat(32), credential: offer.credential })).status, 409, 'its nonce counts once');
  } finally {
    await s.close();
  }
});

test('the mock collector tells a cohort\'s fate only for a nonce it issued for that cohort (so a fate the page acted on proves it sent its nonce)', async () => {
  const s = await setup();
  try {
    const json = { 'content-type': 'application/json' };
    const offer = await (await fetch(`${s.server.base}/api/surveys/leaps-demo/definition`, { method: 'POST', body: '{}', headers: json })).json();
    const { nonce } = offer.credential;
    const ask = (body, { survey = 'leaps-demo', cohort = 0, method = 'POST', headers = json } = {}) => fetch(
      `${s.server.base}/api/surveys/${survey}/cohorts/${cohort}/fate`,
      method === 'GET' ? {} : { method, body: typeof body === 'string' ? body : JSON.stringify(body), headers },
    );
    const told = await ask({ nonce });
    assert.equal(told.status, 200, 'the issued nonce');
    assert.deepEqual(await told.json(), { survey: 'leaps-demo', cohort: 0, fate: 'open', answer_again: false });
    // Anything else is one 404, as for a survey that does not exist (issue 43 §6).
    const refused = [
      ['no nonce', await ask({})],
      ['another nonce', await ask({ nonce: 'f'.repeat(32) })],
      ['another cohort', await ask({ nonce }, { cohort: 1 })],
      ['another survey', await ask({ nonce }, { survey: 'shares-demo' })],
      ['no such survey', await ask({ nonce }, { survey: 'no-such-survey' })],
    ];
    for (const [what, r] of refused) {
      assert.equal(r.status, 404, what);
      const { error } = await r.json();
      assert.match(error, /^no cohort [0-9]+ of survey "[a-z-]+" is known to this device's credential$/, what);
    }
    assert.equal((await ask(null, { method: 'GET' })).status, 405, 'GET');
    assert.equal((await ask(`nonce=${nonce}`, { headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status, 415, 'a form post');
    assert.equal((await ask({ nonce, invite: 'x' })).status, 400, 'another field');
    assert.deepEqual((await fates(s)).map((f) => [f.method, f.cohort, f.status, f.holder]), [
      ['POST', 0, 200, true], ['POST', 0, 404, false], ['POST', 0, 404, false], ['POST', 1, 404, false],
      ['POST', 0, 404, false], ['POST', 0, 404, false], ['GET', 0, 405, false],
    ]);
  } finally {
    await s.close();
  }
});

test('a definition signed by another key is refused: the form never shows and nothing is sent', async () => {
  const s = await setup();
  try {
    await mode(s, { offer: 'other_key' });
    const text = await assertRefused(s, surveyLink(s), "not signed by this deployment's collector");
    assert.match(text, /This survey cannot be opened: .*\/api\/surveys\/leaps-demo\/definition.*nothing was sent/);
    await screenshot(s.page, 'participate-forged');
    await assertNothingSent(s, 'other key');
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});

test('a correctly signed definition sending to a foreign origin is refused: upload address or one share', async () => {
  const s = await setup();
  try {
    await mode(s, { offer: 'foreign_upload' });
    let text = await assertRefused(s, surveyLink(s), "not one of this deployment's services");
    assert.match(text, /http:\/\/evil\.example\/api\/surveys\/leaps-demo\/uploads/);
    await mode(s, { offer: 'foreign_share' });
    // Filtered by the share's address: the first refusal's alert is replaced, not kept.
    text = await assertRefused(s, surveyLink(s, 'shares-demo'), 'http://evil.example/right/1/');
    assert.match(text, /not one of this deployment's services/);
    await assertNothingSent(s, 'foreign destination');
    assert.ok(!s.record.requests.some((r) => r.url.includes('evil.example')), 'nothing went to the foreign origin');
  } finally {
    await s.close();
  }
});

test('a definition signed by this deployment but below the policy\'s floors (p2 = 0) is refused, in the participant\'s language', async () => {
  for (const [locale, words] of [
    ['en-US', /^This survey cannot be opened: it would protect your answers less than this app requires \(it pads the answers with 0 random numbers, fewer than the 503 a group of 20 needs\)\. It was refused and nothing was sent\.$/],
    ['es-ES', /^No se puede abrir esta encuesta: protegería sus respuestas menos de lo que exige esta aplicación \(completa las respuestas con 0 números aleatorios, menos de los 503 que necesita un grupo de 20\)\. Se rechazó y no se envió nada\.$/],
  ]) {
    const s = await setup({ locale });
    try {
      await mode(s, { offer: 'weak_p2' });
      await s.page.goto(surveyLink(s));
      const alert = s.page.getByRole('alert').filter({ hasText: /0/ });
      await alert.waitFor();
      assert.match(await alert.textContent(), words);
      assert.equal(await s.page.getByRole('checkbox').count(), 0, 'the consent form never shows');
      assert.equal(await s.page.locator('form.consent').count(), 0);
      await assertNothingSent(s, `weak plan (${locale})`);
      assert.equal((await offers(s)).length, 1, 'the offer was served (and refused by the device)');
      if (locale === 'en-US') await screenshot(s.page, 'participate-weak-plan');
      assert.deepEqual(s.record.errors, []);
    } finally {
      await s.close();
    }
  }
});

test('a collector that never answers the deployment: the page is still drawn, saying it is loading the survey', async () => {
  // The participant's module holds its first render until the opening it started has asked for
  // its place (services::participation::start_opening), but only for a bounded time: a network
  // that does not answer must not leave a blank page.
  const s = await setup();
  try {
    let asked = 0;
    await s.page.route('**/api/deployment', () => { asked += 1; }); // never fulfilled
    await s.page.goto(`${s.server.base}/#/participate?survey=leaps-demo`);
    await s.page.getByText('Loading the survey…').waitFor();
    assert.ok(asked >= 1, 'the deployment was asked for');
    assert.deepEqual(await offers(s), [], 'no place taken without the deployment');
  } finally {
    await s.close();
  }
});

test('a link naming an address instead of a survey id is refused without fetching anything', async () => {
  const s = await setup();
  try {
    for (const given of ['http://evil.example/def.json', 'surveys/leaps-demo.json']) {
      s.record.requests.length = 0;
      const text = await assertRefused(s, `${s.server.base}/#/participate?survey=${encodeURIComponent(given)}`, `${JSON.stringify(given)} is not a survey id`);
      assert.match(text, /nothing was fetched/);
      assert.ok(text.includes(given), text);
      // No request for the address, and none for any definition or the deployment either (the
      // service worker's install fetches the app's own files, the bundled surveys among them).
      const fetched = s.record.requests.filter((r) => !r.worker).map((r) => r.url).filter((u) => u.includes('evil.example') || u.includes('/api/') || u.includes('/surveys/'));
      assert.deepEqual(fetched, [], given);
    }
    const text = await assertRefused(s, `${s.server.base}/#/participate?demo=${encodeURIComponent('../fixtures/x')}`, 'is not one of the demonstration surveys');
    assert.match(text, /leaps-demo, wellbeing-optional, shares-demo, habits-branching/);
    assert.deepEqual(await offers(s), []);
    await assertNothingSent(s, 'address in the link');
  } finally {
    await s.close();
  }
});

test('a demonstration is labelled as such, shows what would leave the device, and sends nothing', async () => {
  const s = await setup();
  try {
    // The landing list links to the demonstrations.
    await s.page.goto(`${s.server.base}/#/participate`);
    // Wait for the app to render the list (the page is WebAssembly: it is not there at load).
    await s.page.locator('main a[href^="#/participate"]').first().waitFor();
    const links = await s.page.locator('main a[href^="#/participate"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    assert.deepEqual(links, ['#/participate?demo=leaps-demo', '#/participate?demo=wellbeing-optional', '#/participate?demo=shares-demo', '#/participate?demo=habits-branching']);
    // Served without the services (this mock lists no live demonstrations), the page says that
    // sending needs them.
    const note = s.page.getByTestId('static-host');
    await note.waitFor();
    assert.match(await note.textContent(), /sending needs the services/);
    await s.page.getByRole('link', { name: /Walking after a stroke/ }).click();
    const banner = s.page.getByTestId('demonstration');
    await banner.waitFor();
    assert.match(await banner.textContent(), /published teaching key, so answers are not private/);
    await s.page.getByLabel('I have read this and agree to take part.').check();
    await s.page.getByRole('button', { name: 'Start the survey' }).click();
    await answerLeaps(s.page);
    const panel = s.page.getByRole('region', { name: 'What leaves your device' });
    await panel.waitFor();
    await s.page.getByTestId('masked-vector').waitFor();
    assert.match(await panel.textContent(), /512 numbers would go to/);
    assert.match(await panel.textContent(), /the key is published, so anyone could undo the masking/);
    await s.page.getByTestId('practice').waitFor();
    assert.match(await s.page.getByTestId('practice').textContent(), /sends nothing/);
    assert.equal(await s.page.getByRole('button', { name: /^(Send|Try again)$/ }).count(), 0, 'no Send button');
    await screenshot(s.page, 'participate-demonstration');
    // It was loaded from the app's own files, never from the collector, and nothing left.
    assert.ok(s.record.requests.some((r) => r.url === `${s.server.base}/surveys/leaps-demo.json`));
    // No service was asked anything but the (read-only) list of live demonstrations.
    const asked = s.record.requests.filter((r) => r.url.includes('/api/') && r.url !== `${s.server.base}/api/surveys`);
    assert.deepEqual(asked.map((r) => r.url), [], 'no service was asked anything else');
    await assertNothingSent(s, 'demonstration');
    assertNoRawData(s, 'demonstration');
    assert.deepEqual(s.record.errors, []);
  } finally {
    await s.close();
  }
});
