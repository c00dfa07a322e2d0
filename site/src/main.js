// kubetab's page: starts the control plane in a Web Worker, shows its
// download and start-up, and connects the console and the live cluster panel
// to it. Nothing here talks to the network except to fetch this site's own
// files (worker.js, wasm_exec.js, kubetab.wasm).

import '@xterm/xterm/css/xterm.css';
import './style.css';

import { Cluster } from './bridge.js';
import { Console, keepFiles } from './terminal.js';
import { wrap, formatBytes } from './text.js';
import { ClusterView } from './clusterview.js';
import { Informer } from './informer.js';
import { ImagesView } from './imagesview.js';
import { t, lang, setLang, onLang, translateDocument } from './i18n.js';
import * as player from './lessons/player.js';
import { Cache } from './cache.js';
import { mountViews, resizable } from './views/views.js';
import * as flowView from './views/flow/flow.js';
import * as objectsView from './views/objects/objects.js';
import * as eventsView from './views/events/events.js';
import * as schedulerView from './views/scheduler/scheduler.js';
import * as storeView from './views/store/store.js';
import * as editorView from './views/editor/editor.js';
import * as embedded from './embedded.js';
import * as kiosk from './kiosk.js';
import './kiosk.css';
import * as persist from './persist/persist.js';

const $ = (sel) => document.querySelector(sel);

// Test and benchmark hooks (test/browser reads these).
const kubetab = {
  timing: { navigation: 0 }, // performance.now() at each start-up phase
  commands: [],              // {line, firstOutputAt, exitAt, code, output}
  consoleText: () => '',
  Informer, // the page's list+watch, for benchmarks that watch as the page does
};
window.kubetab = kubetab;

// Embedded in another page (embed.js, embedded.js): a bare console, or a
// lesson and the console; no saved state.
kubetab.embedded = embedded.embedMode();
if (kubetab.embedded) document.documentElement.dataset.embed = document.body.dataset.embed = kubetab.embedded;

// --- language ---------------------------------------------------------------
onLang((code) => {
  document.documentElement.lang = code;
  translateDocument();
});
$('#lang').addEventListener('click', () => setLang(lang() === 'ja' ? 'en' : 'ja'));

// --- the control plane --------------------------------------------------------
const cluster = new Cluster('worker.js', { ephemeral: !!kubetab.embedded });
kubetab.cluster = cluster;
onLang((code) => cluster.setLang(code)); // help and kubetab's own commands speak it

const loader = $('#loader');
const bar = $('#loader .bar > span');
let phase = 'download';
let progressText = '';

function showLoader() {
  loader.dataset.phase = phase;
  $('#loader .phase').textContent = t(`load.${phase}`);
  $('#loader .bytes').textContent = progressText;
}
onLang(showLoader);

cluster.on('progress', ({ loaded, total }) => {
  kubetab.timing.downloaded = performance.now();
  if (total > 0) {
    bar.style.width = `${Math.min(100, (loaded / total) * 100).toFixed(1)}%`;
    progressText = t('load.bytes', { loaded: formatBytes(loaded), total: formatBytes(total) });
  } else {
    progressText = t('load.bytesUnknown', { loaded: formatBytes(loaded) });
  }
  loader.dataset.determinate = total > 0 ? 'yes' : 'no';
  showLoader();
});
cluster.on('phase', ({ phase: p }) => {
  kubetab.timing[p] = performance.now();
  phase = p;
  if (p === 'compile') bar.style.width = '100%';
  showLoader();
});
cluster.on('ready', () => {
  kubetab.timing.ready = performance.now();
  phase = 'ready';
  progressText = '';
  showLoader();
  loader.classList.add('done');
  loader.addEventListener('transitionend', () => { loader.hidden = true; }, { once: true });
  term.print(`\x1b[38;5;114m${t('console.ready')}\x1b[0m\r\n`);
});
// Offline: once the cluster runs (kubetab.wasm is in the HTTP cache by then),
// a service worker keeps the whole app for visits with no network (sw.js).
// kubetab.offline resolves to its registration (test hook).
cluster.on('ready', () => {
  if (!('serviceWorker' in navigator)) return;
  kubetab.offline = navigator.serviceWorker.register('sw.js')
    .catch((err) => { console.warn('kubetab: no offline copy:', err); return null; });
});
cluster.on('failed', ({ message }) => {
  phase = 'failed';
  progressText = message;
  loader.classList.add('failed');
  showLoader();
  term.print(`\x1b[31m${t('load.failed')}: ${message}\x1b[0m\r\n`);
});
cluster.on('panic', ({ where, message, stack }) => {
  console.error(`kubetab: panic in ${where}: ${message}\n${stack}`);
  term.print(`\x1b[31m${t('console.panic', { where, message })}\x1b[0m\r\n`);
});
cluster.on('exited', () => {
  loader.classList.add('failed');
  const tail = cluster.stderr.join('').split('\n').slice(-12).join('\r\n');
  term.print(`\x1b[31m${tail}\r\n${t('console.crashed')}\x1b[0m\r\n`);
});

// --- the console --------------------------------------------------------------
const term = new Console($('#terminal'), (line, onOutput, tty) => {
  const record = { line, firstOutputAt: 0, exitAt: 0, code: null, output: '' };
  kubetab.commands.push(record);
  const decoder = new TextDecoder();
  const handle = cluster.run(line, (bytes, fd) => {
    if (!record.firstOutputAt) record.firstOutputAt = performance.now();
    if (record.output.length < 65536) record.output += decoder.decode(bytes, { stream: true });
    onOutput(bytes, fd);
  }, null, tty);
  handle.done.then((code) => {
    record.exitAt = performance.now();
    record.code = code;
  });
  return handle;
}, (before) => cluster.tab(before));
kubetab.console = term;
onLang((code) => term.setLang(code));
keepFiles(cluster, term); // the console's files survive a reload
kubetab.consoleText = () => {
  const buf = term.term.buffer.active;
  const lines = [];
  for (let i = 0; i < buf.length; i++) lines.push(buf.getLine(i).translateToString(true));
  return lines.join('\n');
};

function welcome() {
  const dim = (s) => `\x1b[38;5;245m${s}\x1b[0m`;
  const cols = Math.max(20, term.term.cols - 1);
  term.write(`\x1b[1mkubetab\x1b[0m — ${wrap(t('tagline'), cols - 10)}\r\n`);
  term.write(`${dim(wrap(t('console.welcome'), cols))}\r\n\r\n`);
  term.write(`${t('console.try')}\r\n`);
  for (const ex of ['kubectl get nodes', 'kubectl create deployment web --image=hello --replicas=3', 'kubectl get pods -w', 'trace web', 'help']) {
    term.write(`  \x1b[38;5;75m${ex}\x1b[0m\r\n`);
  }
  term.write(`${dim(wrap(t('term.keys'), cols))}\r\n\r\n`);
  if (!cluster.isReady) term.write(`${dim(t('console.starting'))}\r\n`);
}
welcome();
term.prompt();
// Ready to type, but the page stays at its top: on a phone the console is
// below the course, and the learner starts by reading.
term.focus({ preventScroll: true });

// --- the views beside the console -------------------------------------------------
// One informer cache feeds every view (cache.js); each view is a module that
// owns its markup (views/views.js). The Cluster tab's tables are in index.html.
const cache = new Cache(cluster);
kubetab.cache = cache;
const viewCtx = {
  cluster,
  cache,
  term,
  bus: new EventTarget(),
  run: (line) => term.typeAndRun(line),
};
kubetab.bus = viewCtx.bus; // tests dispatch 'select' as a view does
kubetab.views = mountViews($('#views'), viewCtx, [
  { name: 'cluster', title: 'views.cluster' },
  { name: 'flow', title: 'flow.title', mount: flowView.mount },
  { name: 'objects', title: 'objects.tab', mount: objectsView.mount },
  { name: 'events', title: 'events.tab', mount: eventsView.mount },
  { name: 'scheduler', title: 'scheduler.title', mount: schedulerView.mount },
  { name: 'store', title: 'store.title', mount: storeView.mount },
  { name: 'editor', title: 'editor.tab', mount: editorView.mount },
]);
editorView.listen(viewCtx); // kubectl edit opens the Editor tab
resizable($('#views'), $('main'));

const view = new ClusterView($('#cluster'), cache);
kubetab.view = view;
view.render();
$('#views').addEventListener('view', (ev) => { if (ev.detail.name === 'cluster') view.render(); });

// --- the image registry, and a learner's own .wasm -------------------------------
const images = new ImagesView($('#registry'), cluster);
kubetab.images = images;
cluster.ready.then(() => images.refresh(), () => {});

// --- the lesson player, beside the console ----------------------------------------
if (kubetab.embedded !== 'console') {
  kubetab.lessons = player.mount($('#lesson'), {
    cluster,
    term,
    commandsRun: () => kubetab.commands.length,
  });
}

// --- a classroom kiosk (kubetab serve --kiosk), if this is one ----------------------
if (!kubetab.embedded) kiosk.setup({ header: $('header.top'), kubetab });

// --- the page that embeds this one, if any ------------------------------------------
if (kubetab.embedded) embedded.listen({ term, cluster });

// --- the cluster that survives a reload: reset, export, import, share ---------------
if (!kubetab.embedded) persist.mount($('#lang'), { cluster, term, lessons: kubetab.lessons });
