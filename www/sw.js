// The service worker (issue 13 §1): it keeps the built app and the surveys a participant opened,
// so a participant who opened an invitation once can fill in the form without a connection.
//
// What it keeps, in the Cache API: the app's own files (APP_FILES, cached on install) and the
// answers to two GET requests of the participant page — the deployment (`/api/deployment`) and
// the signed survey offer (`/api/surveys/ID/definition[?invite=…]`) — none of which holds an
// answer. Everything is fetched from the network first and the copy used only when the network
// fails, so an online participant always gets the current app and a fresh credential, and an
// offline one the copy (whose credential's expiry the page still checks). Uploads (POST) and
// every other request pass straight through: the masked uploads that wait for a connection are
// kept by the page in IndexedDB, never here.
//
// e2e/tests/offline.test.mjs checks APP_FILES against the built dist/ directory.
const CACHE = 'orthomask-v1';
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

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(APP_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  // Older versions' caches go; this version controls the open pages at once.
  event.waitUntil(
    caches.keys()
      .then((names) => Promise.all(names.filter((n) => n !== CACHE).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

/** Whether a request is one this worker answers: same origin, GET, the app or a survey offer. */
function kept(request) {
  if (request.method !== 'GET') return false;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return false;
  if (url.pathname.startsWith('/api/')) {
    return url.pathname === '/api/deployment' || /^\/api\/surveys\/[a-z0-9_-]+\/definition$/.test(url.pathname);
  }
  return true;
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (!kept(request)) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(request);
      if (response.ok) await cache.put(request, response.clone());
      return response;
    } catch (offline) {
      // A page navigation (any hash route) is the app's index page.
      const copy = (await cache.match(request)) ?? (request.mode === 'navigate' ? await cache.match('./') : undefined);
      if (copy) return copy;
      throw offline;
    }
  })());
});
