// Everything a page could have kept on the device, read in the page (issue 13 §1: "read them
// all"): localStorage, sessionStorage, cookies, every IndexedDB database's every object store's
// every key and value, and every Cache API cache's every entry (its URL, content type and, for
// text, its body) — and the checks on it (issue 20 §6):
//
// * no raw answer anywhere;
// * no key material where it does not belong. `watchKeyMaterial(context)` records what the
//   browser received and sent: every survey offer's device key (`masking.right_mask_key` of the
//   signed definition, from which the cohort's right mask B_k is built), credential nonce and
//   signature; every invitation token sent for a place; every upload's idempotency token and
//   credential. The device key and the invitation never appear anywhere, at any time. While an
//   upload waits, only the outbox entry of that upload may hold its own token and credential;
//   once it is sent or discarded, none of them appears anywhere.
//
// Shared by the web suite (e2e/tests) and the services' end-to-end scripts (e2e-services).
import assert from 'node:assert/strict';

export async function readDeviceStorage(page) {
  return page.evaluate(async () => {
    const done = (request) => new Promise((resolve, reject) => {
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    const indexedDBs = {};
    for (const { name } of await indexedDB.databases()) {
      const db = await done(indexedDB.open(name));
      indexedDBs[name] = {};
      for (const store of db.objectStoreNames) {
        const objects = db.transaction(store).objectStore(store);
        const [keys, values] = [await done(objects.getAllKeys()), await done(objects.getAll())];
        indexedDBs[name][store] = keys.map((key, i) => ({ key, value: values[i] }));
      }
      db.close();
    }
    const cached = {};
    for (const name of ('caches' in self ? await caches.keys() : [])) {
      const cache = await caches.open(name);
      cached[name] = [];
      for (const request of await cache.keys()) {
        const response = await cache.match(request);
        const type = response.headers.get('content-type') ?? '';
        const text = /json|text|javascript|svg|manifest/.test(type) ? await response.text() : null;
        cached[name].push({ url: request.url, type, text });
      }
    }
    return {
      local: { ...localStorage },
      session: { ...sessionStorage },
      cookie: document.cookie,
      indexedDB: indexedDBs,
      caches: cached,
    };
  });
}

const OFFER = /\/api\/surveys\/[^/]+\/definition(\?|$)/;
const UPLOAD = /\/uploads(\?|$)/;

/**
 * Record the key material the pages of `context` receive and send (see the module comment):
 * `deviceKeys`, `invites`, `credentials` (nonce → signature) and `tokens`. The checks below also
 * add what they find in outbox entries, so an entry's token and credential are searched for
 * after it is gone. `settled()` waits for the offers' bodies to be read.
 */
export function watchKeyMaterial(context, known = null) {
  const secrets = known ?? { deviceKeys: new Set(), invites: new Set(), credentials: new Map(), tokens: new Set() };
  const pending = [];
  const credential = (c) => {
    if (c && typeof c.nonce === 'string' && typeof c.signature === 'string') secrets.credentials.set(c.nonce, c.signature);
  };
  const json = (text) => { try { return JSON.parse(text); } catch { return null; } };
  context.on('request', (r) => {
    if (OFFER.test(r.url())) {
      // The invitation of a place: in the JSON body, or (an old client) in the address.
      const invite = json(r.postData() ?? '')?.invite ?? new URL(r.url()).searchParams.get('invite');
      if (typeof invite === 'string' && invite) secrets.invites.add(invite);
    }
    if (r.method() === 'POST' && UPLOAD.test(r.url())) {
      const upload = json(r.postData() ?? '');
      if (typeof upload?.token === 'string') secrets.tokens.add(upload.token);
      credential(upload?.credential);
    }
  });
  context.on('response', (r) => {
    if (!OFFER.test(r.url()) || !r.ok()) return;
    pending.push(r.text().then((text) => {
      const offer = json(text);
      const definition = json(offer?.signed?.definition ?? '');
      const key = definition?.masking?.right_mask_key;
      if (typeof key === 'string') secrets.deviceKeys.add(key);
      credential(offer?.credential);
    }).catch(() => { /* a body the browser did not keep (a redirect, a closed page) */ }));
  });
  secrets.settled = () => Promise.all(pending.splice(0));
  return secrets;
}

/** Every place of `storage` that holds text: [where, text, outbox entry or null]. */
function places(storage) {
  const out = [];
  const text = (v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? String(v));
  for (const [area, values] of [['localStorage', storage.local], ['sessionStorage', storage.session]]) {
    for (const [k, v] of Object.entries(values)) out.push([`${area}[${k}]`, `${k}\n${v}`, null]);
  }
  out.push(['document.cookie', storage.cookie, null]);
  for (const [db, stores] of Object.entries(storage.indexedDB)) {
    for (const [store, entries] of Object.entries(stores)) {
      for (const { key, value } of entries) {
        const outbox = db === 'orthomask' && store === 'outbox' && typeof value === 'string' ? JSON.parse(value) : null;
        out.push([`IndexedDB ${db}/${store}[${text(key)}]`, `${text(key)}\n${text(value)}`, outbox]);
      }
    }
  }
  for (const [name, entries] of Object.entries(storage.caches)) {
    for (const { url, text: body } of entries) out.push([`Cache ${name} ${url}`, `${url}\n${body ?? ''}`, null]);
  }
  return out;
}

/**
 * What the device keeps, checked: no local or session storage, no cookie; IndexedDB only the
 * outbox, whose entries are masked uploads (the fields of a waiting submission, no raw number);
 * the Cache API nothing of the API (so never a survey offer or the deployment) and no address
 * with a query; and, with `secrets` from `watchKeyMaterial`, no key material but each waiting
 * upload's own token and credential in its own outbox entry. Returns the outbox's entries.
 */
export function assertNothingKept(storage, rawNumbers, label, secrets) {
  assert.deepEqual([storage.local, storage.session, storage.cookie], [{}, {}, ''], `${label}: web storage`);
  const waiting = [];
  for (const [db, stores] of Object.entries(storage.indexedDB)) {
    assert.deepEqual([db, Object.keys(stores)], ['orthomask', ['outbox']], `${label}: IndexedDB`);
    for (const { key, value } of stores.outbox) {
      const entry = JSON.parse(value);
      assert.deepEqual(Object.keys(entry).sort(), ['cohort', 'destinations', 'survey', 'token'], `${label}: outbox entry`);
      assert.equal(entry.token, key);
      for (const d of entry.destinations) assert.deepEqual(Object.keys(d).sort(), ['upload', 'url']);
      waiting.push(entry);
    }
  }
  for (const entries of Object.values(storage.caches)) {
    for (const { url } of entries) {
      const { pathname, search } = new URL(url);
      assert.equal(search, '', `${label}: cached ${url} has a query`);
      assert.ok(!pathname.startsWith('/api/'), `${label}: cached ${url}, an answer of the API`);
    }
  }
  noRawNumber(waiting, rawNumbers, `${label}: the outbox`);
  if (secrets) noKeyMaterial(storage, waiting, secrets, label);
  return waiting;
}

/** The key-material rule of the module comment; every violation named in one failure. */
function noKeyMaterial(storage, waiting, secrets, label) {
  // A waiting upload's token and credential are searched for from now on, even once it is gone.
  for (const entry of waiting) {
    secrets.tokens.add(entry.token);
    for (const d of entry.destinations) {
      const c = d.upload.credential;
      if (c) secrets.credentials.set(c.nonce, c.signature);
    }
  }
  const never = [
    ...[...secrets.deviceKeys].flatMap((k) => [[`the device key ${k}`, k], [`the device key ${k}`, k.toUpperCase()]]),
    ...[...secrets.invites].flatMap((t) => [[`the invitation ${t}`, t], [`the invitation ${t}`, encodeURIComponent(t)]]),
  ];
  const ownOnly = [
    ...[...secrets.tokens].map((t) => [`the upload token ${t}`, t, t]),
    ...[...secrets.credentials].flatMap(([nonce, signature]) => [
      [`the credential nonce ${nonce}`, nonce, nonce],
      [`the credential signature ${signature.slice(0, 16)}…`, signature, nonce],
    ]),
  ];
  const problems = [];
  for (const [where, text, outbox] of places(storage)) {
    for (const [what, needle] of never) {
      if (needle && text.includes(needle)) problems.push(`${what} is in ${where}`);
    }
    // An outbox entry may hold its own token and credential, nothing of another upload.
    const own = new Set(outbox ? [outbox.token, ...outbox.destinations.map((d) => d.upload.credential?.nonce)] : []);
    for (const [what, needle, owner] of ownOnly) {
      if (needle && text.includes(needle) && !own.has(owner)) problems.push(`${what} is in ${where}`);
    }
  }
  assert.deepEqual(problems, [], `${label}: key material kept on the device`);
}

/**
 * Read the page's storage once the watched offers are read, and check it (assertNothingKept).
 * Returns the outbox's entries.
 */
export async function assertDeviceClean(page, rawNumbers, label, secrets) {
  await secrets?.settled();
  return assertNothingKept(await readDeviceStorage(page), rawNumbers, label, secrets);
}

function noRawNumber(value, rawNumbers, label) {
  for (const v of numbersIn(value)) {
    for (const raw of rawNumbers) assert.ok(Math.abs(v - raw) > 1e-9, `${label} holds the raw answer ${raw}`);
  }
}

/** Every number anywhere inside a JSON value. */
export function numbersIn(value, out = []) {
  if (typeof value === 'number') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => numbersIn(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => numbersIn(v, out));
  return out;
}
