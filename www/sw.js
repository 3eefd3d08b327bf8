// The service worker (issue 13 §1, issue 20 §6): it keeps the built app, so the app itself opens
// without a connection — and nothing else that could matter.
//
// What it keeps, in the Cache API: the app's own files (APP_FILES, cached on install and
// refreshed from the network), and nothing else. Nothing of the API (/api/…: the collector
// answers all of it `Cache-Control: no-store`) — so never a survey offer (its definition carries
// the cohort's device key `masking.right_mask_key`, from which the right mask B_k is built, and
// its upload credential) — never a POST, never anything of another origin. So a survey opens only
// online; a form opened online keeps working offline while its page stays open, and its masked
// upload waits in IndexedDB (the page's outbox, which holds that upload's masked values,
// credential and token until it is sent or discarded) — never here.
//
// An earlier version kept survey offers: on activation every other cache is deleted, and any
// entry of this cache that this version would not keep is removed.
//
// e2e/tests/offline.test.mjs checks APP_FILES against the built dist/ directory, and reads every
// cache while and after a submission waits.
const CACHE = 'orthomask-v2';
const APP_FILES = [
  './',
  'index.html',
  'orthomask-web.js',
  'orthomask-web_bg.wasm',
  'style.css',
  'worker.js',
  'manifest.webmanifest',
  'icon.svg',
  'surveys/leaps-demo.json',
  'surveys/wellbeing-optional.json',
  'surveys/shares-demo.json',
  'surveys/habits-branching.json',
];
/** The absolute URLs of the app's files, without query or fragment. */
const appUrls = new Set(APP_FILES.map((f) => new URL(f, self.registration.scope).href));

/**
 * Whether a request is one this worker answers and may keep: same origin, GET, no query string
 * (an address with one might carry a token), and one of the app's files.
 */
function keepable(request) {
  if (request.method !== 'GET') return false;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || url.search !== '') return false;
  url.hash = '';
  return appUrls.has(url.href);
}

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(APP_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  // Older versions' caches go (an earlier version kept survey offers); of this one, whatever
  // this version would not keep goes too. Then this version controls the open pages at once.
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name !== CACHE) await caches.delete(name);
    }
    const cache = await caches.open(CACHE);
    for (const request of await cache.keys()) {
      if (!keepable(request)) await cache.delete(request);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  const navigation = request.mode === 'navigate' && request.method === 'GET'
    && new URL(request.url).origin === self.location.origin;
  // Everything else (the API — the deployment, POSTs, survey offers, fates, uploads — and other
  // origins) passes straight through: the worker neither answers nor keeps it.
  if (!keepable(request) && !navigation) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(request);
      if (keepable(request) && response.ok) await cache.put(request, response.clone());
      return response;
    } catch (offline) {
      // A page navigation (any hash route) is the app's index page.
      const copy = (keepable(request) ? await cache.match(request) : undefined)
        ?? (navigation ? await cache.match('./') : undefined);
      if (copy) return copy;
      throw offline;
    }
  })());
});
