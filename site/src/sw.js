const BUILD = { version: 'unbuilt', files: [] }; // written by site/build -finish (site.WriteServiceWorker)
// kubetab's service worker: it keeps the whole app (the page, the worker,
// kubetab.wasm, the course) in one cache named after the build, so that every
// later visit and every reload works with no network at all, as a classroom
// kiosk or a train ride needs. The page registers it once the cluster is
// ready (main.js): kubetab.wasm is in the browser's HTTP cache by then, so
// install copies it from there instead of downloading it a second time.
//
//   install   fetch every file of BUILD.files into the cache "kubetab-<version>"
//   activate  delete every other kubetab- cache (older builds), then take
//             control of open pages
//   fetch     a GET for one of the app's files: from the cache; a page
//             navigation inside the scope: the cached index.html; anything
//             else: the network, as without a service worker
//
// A new build changes BUILD (its version is a hash of every file), so the
// browser, which compares sw.js byte for byte on each visit, installs the new
// one; it replaces the old at once (skipWaiting), and the next load is the
// new build. Paths are relative to this file, so the app works at a host's
// root and under any sub-path (https://example.org/course/kubetab/).

const CACHE = `kubetab-${BUILD.version}`;
const scope = new URL('./', self.location.href);
// index.html is cached as the scope itself ("./"): a static server may
// redirect /index.html to ./, and a navigation must not get a redirected answer.
const index = scope.href;
const files = new Set(BUILD.files.map((f) => new URL(f, scope).href));

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // 'default' lets the HTTP cache answer (or revalidate with a 304): the
    // page has just downloaded these files.
    await cache.addAll([...files].map((url) => new Request(url, { cache: 'default' })));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('kubetab-') && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  url.hash = '';
  let key = null;
  if (req.mode === 'navigate' && url.href.startsWith(scope.href)) {
    const path = url.pathname.slice(scope.pathname.length);
    if (path === '' || path === 'index.html') key = index;
  } else if (files.has(url.origin + url.pathname) && url.search === '') {
    key = url.href;
  }
  if (!key) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(key);
    return hit || fetch(req);
  })());
});
