// The service worker (issue 13 §1, issue 20 §6, issue 25): it keeps the built app, so the app
// opens from the device without downloading it again, and without a connection — and it keeps
// nothing else that could matter.
//
// What it keeps, in the Cache API: this version's own files (APP_FILES) and this script itself
// (SELF: a page it controls reads from it the version it runs, src/services/app_build.rs, and
// never asks the network for it first), and nothing else. Nothing
// of the API (/api/…: the collector answers all of it `Cache-Control: no-store`) — so never a
// survey offer (its definition carries the cohort's device key `masking.right_mask_key`, from
// which the right mask B_k is built, and its upload credential) — never a POST, never anything of
// another origin. So a survey opens only online; a form opened online keeps working offline while
// its page stays open, and its masked upload waits in IndexedDB (the page's outbox, which holds
// that upload's masked values, credential and token until it is sent or discarded) — never here.
//
// Versions (issue 25). scripts/build-web.sh writes this file for each build: the app's
// content-hashed names, the cache named after the build, and LAZY_FILES. So a build that changes
// any file is a new sw.js, which the browser finds when it revalidates sw.js and installs in the
// background; until then every file comes from this version's cache without asking the network
// (cache-first: in this cache a name always has this version's bytes). Installing fills the new
// version's cache with the files a participant needs (LAZY_FILES — the whole app's module and
// worker, which only the other views run — are kept when first fetched); activating deletes the
// older versions' caches and takes over the open pages. A waiting upload is not in any cache: it
// stays in the outbox, which every version reads and sends (e2e-services/page-load.mjs updates the
// app under a waiting upload).
//
// e2e/tests/offline.test.mjs checks APP_FILES against the built dist/ directory, and reads every
// cache while and after a submission waits.
const CACHE = 'orthomask-{{build}}';
const APP_FILES = [
  './',
  'index.html',
  '{{name orthomask-participant.js}}',
  '{{name orthomask-participant_bg.wasm}}',
  '{{name orthomask-web.js}}',
  '{{name orthomask-web_bg.wasm}}',
  '{{name style.css}}',
  'worker.js',
  'manifest.webmanifest',
  'icon.svg',
  'surveys/leaps-demo.json',
  'surveys/wellbeing-optional.json',
  'surveys/shares-demo.json',
  'surveys/habits-branching.json',
];
// The files a participant's page never loads, with their SHA-256: fetched when another view needs
// them, and named here so that a page computes its build without them
// (orthomask_survey::app_build::lazy_files).
const LAZY_FILES = {
  '{{name orthomask-web.js}}': '{{sha256 orthomask-web.js}}',
  '{{name orthomask-web_bg.wasm}}': '{{sha256 orthomask-web_bg.wasm}}',
  'worker.js': '{{sha256 worker.js}}',
};
// The SHA-256 of every other file but index.html, so that a page computes its build reading only
// index.html and this script (orthomask_survey::app_build::declared_files says why that keeps
// the build digest whole): the files index.html loads with their Subresource Integrity digest,
// and those a participant's page does not load. scripts/stage_web.py writes it: every file of the
// build but this one, index.html and LAZY_FILES.
const DECLARED_FILES = {{declared}};
/** This script, kept beside the files (never answered from the cache: the static route and the
 * handler below pass it to the network, where the browser looks for a new version). */
const SELF = 'sw.js';
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

/**
 * The same answers as the fetch handler below, given by the browser itself (the static routing
 * API), so that opening the app again need not start this worker first — on a slow phone, a
 * noticeable part of a repeat visit (issue 25): the API and this file from the network (the
 * handler passes them through), the files installing keeps from this version's cache (the
 * handler answers them from it). Everything else (LAZY_FILES, kept when first fetched; other
 * addresses of this origin opened as pages) still comes to the handler. A browser without the
 * API, or that refuses a rule, simply runs the handler for everything.
 */
function addStaticRoutes(event, precache) {
  if (typeof event.addRoutes !== 'function' || typeof URLPattern === 'undefined') return Promise.resolve();
  const exactly = (file) => {
    const url = new URL(file, self.registration.scope);
    return new URLPattern({ origin: url.origin, pathname: url.pathname, search: '' });
  };
  const origin = self.location.origin;
  return event.addRoutes([
    { condition: { urlPattern: new URLPattern({ origin, pathname: '/api/*' }) }, source: 'network' },
    { condition: { urlPattern: exactly(SELF) }, source: 'network' },
    ...precache.map((file) => ({
      condition: { urlPattern: exactly(file), requestMethod: 'GET' },
      source: { cacheName: CACHE },
    })),
  ]).catch(() => {});
}

self.addEventListener('install', (event) => {
  // From the browser's HTTP cache where it can: the page has just fetched the content-hashed
  // files (immutable), and the others are revalidated (a 304 when unchanged).
  const precache = APP_FILES.filter((f) => !(f in LAZY_FILES));
  event.waitUntil(Promise.all([
    addStaticRoutes(event, precache),
    caches.open(CACHE).then((cache) => cache.addAll([...precache, SELF])),
  ]).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  // Older versions' caches go (one of them kept survey offers); of this one, whatever this
  // version would not keep goes too. Then this version controls the open pages at once.
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name !== CACHE) await caches.delete(name);
    }
    const cache = await caches.open(CACHE);
    const script = new URL(SELF, self.registration.scope).href;
    for (const request of await cache.keys()) {
      if (!keepable(request) && request.url !== script) await cache.delete(request);
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
    if (keepable(request)) {
      const copy = await cache.match(request, { ignoreVary: true });
      if (copy) return copy;
      const response = await fetch(request);
      if (response.ok) await cache.put(request, response.clone());
      return response;
    }
    // Another address of this origin opened as a page: the network's answer, and offline the
    // app's index page (any hash route).
    try {
      return await fetch(request);
    } catch (offline) {
      const copy = await cache.match('./', { ignoreVary: true });
      if (copy) return copy;
      throw offline;
    }
  })());
});
