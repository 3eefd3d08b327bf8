// Everything a page could have kept on the device, read in the page (issue 13 §1: "read them
// all"): localStorage, sessionStorage, cookies, every IndexedDB database's every object store's
// every value, and every Cache API cache's every entry (its URL, content type and, for text, its
// body). Shared by the web suite (e2e/tests) and the services' end-to-end scripts (e2e-services).
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
