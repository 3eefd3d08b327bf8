// Everything a page could have kept on the device, read in the page (issue 13 §1: "read them
// all"): localStorage, sessionStorage, cookies, every IndexedDB database's every object store's
// every value, and every Cache API cache's every entry (its URL, content type and, for text, its
// body) — and the check that none of it holds an answer. Shared by the web suite (e2e/tests) and
// the services' end-to-end scripts (e2e-services).
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

/**
 * What the device keeps, checked: no local or session storage, no cookie; IndexedDB only the
 * outbox, whose entries are masked uploads (the fields of a waiting submission, no raw number);
 * the Cache API only the app's own files and the participant page's two GETs (the deployment and
 * the signed offer), with no raw number in them. Returns the outbox's entries.
 */
export function assertNothingKept(storage, rawNumbers, label) {
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
    for (const { url, text } of entries) {
      const { pathname } = new URL(url);
      if (!pathname.startsWith('/api/')) continue;
      assert.ok(pathname === '/api/deployment' || /^\/api\/surveys\/[a-z0-9_-]+\/definition$/.test(pathname), `${label}: cached ${url}`);
      assert.ok(text !== null, `${label}: ${url} is JSON`);
      noRawNumber(JSON.parse(text), rawNumbers, `${label}: cached ${url}`);
    }
  }
  noRawNumber(waiting, rawNumbers, `${label}: the outbox`);
  return waiting;
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
