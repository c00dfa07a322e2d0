// The cluster that survives a reload: the page's side of wasm/worker's
// persist.go. The worker saves the store's snapshot to IndexedDB after
// changes and restores it before its controllers start; this module shows
// what happened (restored, saved, or why the saved cluster could not be
// used), and offers a menu in the page header:
//
//   Reset cluster   a fresh cluster (in a lesson: the lesson's own reset,
//                   its nodes and setup), which replaces the saved one
//   Export          the snapshot as a file (core/store's format, versioned
//                   and checksummed: what `etcdctl snapshot save` writes)
//   Import          a snapshot file, checked in the worker before it
//                   replaces anything; a bad file changes nothing
//   Share link      the cluster in the URL fragment (#cluster=1.…, core/
//                   snapshot: deflate + base64url, at most 16 KB), which
//                   opens the same objects in any browser
//
// Test hooks: the menu [data-persist=menu], its buttons [data-persist=
// reset|export|import|share], the file input [data-persist=file], the link
// box [data-persist=link], the status line [data-persist=status];
// window.kubetab.persist has the last save, the restore and the messages.

import { addStrings, t, lang, onLang } from '../i18n.js';
import { wrap } from '../text.js';
import { linkPayload, linkURL } from './link.js';
import './persist.css';

addStrings({
  en: {
    'persist.menu': 'Cluster',
    'persist.menu.title': 'Save, reset, export, import or share this cluster',
    'persist.reset': 'Reset cluster',
    'persist.reset.hint': 'A fresh cluster (in a lesson: the lesson’s starting point). The saved one is replaced.',
    'persist.reset.confirm': 'Replace this cluster with a fresh one? Everything in it is lost (export it first to keep it).',
    'persist.export': 'Export to a file',
    'persist.import': 'Import a file…',
    'persist.share': 'Copy a share link',
    'persist.autosave': 'This cluster is saved in this browser and comes back when you reload.',
    'persist.status.none': 'Not saved yet',
    'persist.status.saved': 'Saved at {time} ({size})',
    'persist.status.saveFailed': 'Could not save: {error}',
    'persist.restored': '— your cluster from your last visit is back ({size}); its pods start again, as after a reboot —',
    'persist.restoreFailed': 'The saved cluster could not be restored, so this is a fresh one. Reason: {error}',
    'persist.imageNotSaved': 'Your image {ref} runs now, but it is not saved with the cluster: {error}',
    'persist.resetDone': '— a fresh cluster; the saved one is replaced —',
    'persist.exported': 'Exported {name} ({size}).',
    'persist.imported': '— imported {name}: this is its cluster now —',
    'persist.importFailed': 'Not imported, nothing changed: {name} is not a kubetab cluster snapshot ({error})',
    'persist.linkCopied': 'Share link copied ({size} of 16 KB). Anyone who opens it gets the same objects.',
    'persist.linkReady': 'Share link ready ({size} of 16 KB): copy it from the box.',
    'persist.linkTooLarge': 'This cluster is too large for a share link ({error}). Export it to a file instead.',
    'persist.linkFailed': 'No share link: {error}',
    'persist.opened': '— opened the shared cluster from the link —',
    'persist.openFailed': 'The share link could not be opened, nothing changed: {error}',
    'persist.open.confirm': 'Open the shared cluster? It replaces the cluster saved in this browser.',
    'persist.busy': 'Working…',
    'persist.resetFailed': 'The cluster could not be reset: {error}',
    'persist.exportFailed': 'The cluster could not be exported: {error}',
  },
  ja: {
    'persist.menu': 'クラスター',
    'persist.menu.title': 'このクラスターの保存・リセット・書き出し・読み込み・共有',
    'persist.reset': 'クラスターをリセット',
    'persist.reset.hint': '新しいクラスターにします（レッスン中はレッスンの開始状態）。保存済みのクラスターは置き換わります。',
    'persist.reset.confirm': 'このクラスターを新しいものに置き換えますか？中身はすべて失われます（残すには先に書き出してください）。',
    'persist.export': 'ファイルに書き出す',
    'persist.import': 'ファイルから読み込む…',
    'persist.share': '共有リンクをコピー',
    'persist.autosave': 'このクラスターはこのブラウザーに保存され、再読み込みしても戻ってきます。',
    'persist.status.none': 'まだ保存されていません',
    'persist.status.saved': '{time} に保存しました（{size}）',
    'persist.status.saveFailed': '保存できませんでした: {error}',
    'persist.restored': '— 前回のクラスターを復元しました（{size}）。再起動後のように Pod がもう一度起動します —',
    'persist.restoreFailed': '保存されたクラスターを復元できなかったため、新しいクラスターで始めます。理由: {error}',
    'persist.imageNotSaved': 'イメージ {ref} はいま使えますが、クラスターと一緒には保存されていません: {error}',
    'persist.resetDone': '— 新しいクラスターです。保存済みのクラスターは置き換わりました —',
    'persist.exported': '{name} に書き出しました（{size}）。',
    'persist.imported': '— {name} を読み込みました。これがいまのクラスターです —',
    'persist.importFailed': '読み込んでいません（何も変わっていません）。{name} は kubetab のクラスタースナップショットではありません（{error}）',
    'persist.linkCopied': '共有リンクをコピーしました（{size} / 16 KB）。開いた人は同じオブジェクトを受け取ります。',
    'persist.linkReady': '共有リンクができました（{size} / 16 KB）。欄からコピーしてください。',
    'persist.linkTooLarge': 'このクラスターは共有リンクには大きすぎます（{error}）。代わりにファイルに書き出してください。',
    'persist.linkFailed': '共有リンクを作れませんでした: {error}',
    'persist.opened': '— リンクで共有されたクラスターを開きました —',
    'persist.openFailed': '共有リンクを開けませんでした（何も変わっていません）: {error}',
    'persist.open.confirm': '共有されたクラスターを開きますか？このブラウザーに保存されたクラスターは置き換わります。',
    'persist.busy': '処理中…',
    'persist.resetFailed': 'クラスターをリセットできませんでした: {error}',
    'persist.exportFailed': 'クラスターを書き出せませんでした: {error}',
  },
});

function formatSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v; else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

/**
 * @param {HTMLElement} before the element the menu goes in front of (the
 *   language switch)
 * @param {{cluster, term, lessons: {resetCurrent: () => Promise<boolean>|false}, confirm?: (msg) => boolean}} ctx
 */
export function mount(before, ctx) {
  const { cluster, term } = ctx;
  const ask = ctx.confirm || ((msg) => window.confirm(msg));
  const state = {
    restored: null, saved: null, saves: [], messages: [], lastLink: '', lastExport: null, busy: false, notice: null,
    imagesSaved: [], // the worker's 'imageSaved' answers: {ref, digest, bytes, error}
  };
  (window.kubetab || (window.kubetab = {})).persist = state;

  const summary = el('summary', { 'data-persist': 'summary' });
  const resetBtn = el('button', { type: 'button', 'data-persist': 'reset' });
  const resetHint = el('p', { class: 'hint' });
  const exportBtn = el('button', { type: 'button', 'data-persist': 'export' });
  const importBtn = el('button', { type: 'button', 'data-persist': 'import' });
  const file = el('input', { type: 'file', class: 'visually-hidden', 'data-persist': 'file', tabindex: '-1' });
  const shareBtn = el('button', { type: 'button', 'data-persist': 'share' });
  const linkBox = el('input', { type: 'text', readonly: '', 'data-persist': 'link', spellcheck: 'false' });
  linkBox.hidden = true;
  const autosave = el('p', { class: 'hint' });
  const status = el('p', { class: 'status', 'data-persist': 'status', role: 'status', 'aria-live': 'polite' });
  const notice = el('p', { class: 'status', 'data-kind': 'error', 'data-persist': 'notice' });
  notice.hidden = true;
  const panel = el('div', { class: 'persist-panel' }, notice, resetBtn, resetHint, exportBtn, importBtn, file, shareBtn, linkBox, autosave, status);
  const menu = el('details', { class: 'persist-menu', 'data-persist': 'menu' }, summary, panel);
  before.parentNode.insertBefore(menu, before);

  let statusKey = 'persist.status.none';
  let statusVars = {};
  let statusKind = '';
  function setStatus(key, vars = {}, kind = '') {
    statusKey = key; statusVars = vars; statusKind = kind;
    draw();
  }
  function draw() {
    summary.textContent = t('persist.menu');
    summary.title = t('persist.menu.title');
    resetBtn.textContent = t('persist.reset');
    resetHint.textContent = t('persist.reset.hint');
    exportBtn.textContent = t('persist.export');
    importBtn.textContent = t('persist.import');
    shareBtn.textContent = t('persist.share');
    autosave.textContent = t('persist.autosave');
    const vars = { ...statusVars };
    if (vars.at) vars.time = new Date(vars.at).toLocaleTimeString(lang() === 'ja' ? 'ja-JP' : 'en-US');
    status.textContent = t(statusKey, vars);
    status.dataset.kind = statusKind;
    notice.hidden = !state.notice;
    if (state.notice) notice.textContent = t(state.notice.key, state.notice.vars);
    for (const b of [resetBtn, exportBtn, importBtn, shareBtn]) b.disabled = state.busy || !cluster.isReady;
  }
  const offLang = onLang(draw);

  // say prints a line in the console (dim, or red for a failure) and keeps
  // it for tests.
  function say(key, vars, kind = 'info') {
    const text = t(key, vars);
    state.messages.push({ key, kind, text });
    const color = kind === 'error' ? '31' : '38;5;245';
    const cols = term.term && term.term.cols ? Math.max(20, term.term.cols - 1) : 80;
    term.print(`\x1b[${color}m${wrap(text, cols)}\x1b[0m\r\n`);
    if (kind === 'error') console.warn(`kubetab: ${text}`);
  }

  async function busy(fn) {
    if (state.busy) return;
    state.busy = true;
    const before = [statusKey, statusVars, statusKind];
    setStatus('persist.busy');
    try {
      await fn();
    } finally {
      state.busy = false;
      if (statusKey === 'persist.busy') [statusKey, statusVars, statusKind] = before;
      draw();
    }
  }

  // --- what the worker did ---------------------------------------------------
  cluster.on('restored', (r) => {
    state.restored = r;
    if (r.error) {
      say('persist.restoreFailed', { error: r.error }, 'error');
      state.notice = { key: 'persist.restoreFailed', vars: { error: r.error } };
      draw();
    }
  });
  // A learner's image kept with the cluster (site/src/worker.js): said only
  // when it could not be.
  cluster.on('imageSaved', (m) => {
    state.imagesSaved.push({ ref: m.ref, digest: m.digest, bytes: m.bytes, error: m.error });
    if (m.error) say('persist.imageNotSaved', { ref: m.ref, error: m.error }, 'error');
  });
  cluster.on('saved', (s) => {
    state.saved = { ...s, at: Date.now() };
    state.saves.push(s.ms);
    if (state.saves.length > 100) state.saves.shift();
    if (state.busy) return;
    if (s.error) setStatus('persist.status.saveFailed', { error: s.error }, 'error');
    else setStatus('persist.status.saved', { at: Date.now(), size: formatSize(s.bytes) });
  });
  cluster.ready.then(() => {
    const r = cluster.restored || state.restored;
    if (r && r.bytes > 0 && !r.error) say('persist.restored', { size: formatSize(r.bytes) });
    draw();
    openLinkFromHash(true);
  }, () => {});

  // The page going away: save what changed since the last save.
  const flush = () => { if (cluster.isReady) cluster.flushSave(); };
  const onVisibility = () => { if (document.visibilityState === 'hidden') flush(); };
  document.addEventListener('visibilitychange', onVisibility);
  window.addEventListener('pagehide', flush);

  // --- the buttons -------------------------------------------------------------
  resetBtn.addEventListener('click', () => busy(async () => {
    if (!ask(t('persist.reset.confirm'))) return;
    menu.open = false;
    const inLesson = ctx.lessons && ctx.lessons.resetCurrent ? await ctx.lessons.resetCurrent() : false;
    if (inLesson) return; // the player printed its own line; the worker saves the lesson's cluster
    const res = await cluster.resetCluster();
    if (res.error) say('persist.resetFailed', { error: res.error }, 'error');
    else { say('persist.resetDone', {}); state.notice = null; }
  }));

  exportBtn.addEventListener('click', () => busy(async () => {
    const res = await cluster.exportSnapshot();
    if (res.type === 'persisted' && res.error) { say('persist.exportFailed', { error: res.error }, 'error'); return; }
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    const name = `kubetab-cluster-${stamp}.snapshot`;
    const url = URL.createObjectURL(new Blob([res.data], { type: 'application/octet-stream' }));
    state.lastExport = { name, bytes: res.data.byteLength, data: res.data };
    const a = el('a', { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    say('persist.exported', { name, size: formatSize(res.data.byteLength) });
  }));

  importBtn.addEventListener('click', () => file.click());
  file.addEventListener('change', () => {
    const f = file.files && file.files[0];
    file.value = '';
    if (!f) return;
    importFile(f);
  });
  function importFile(f) {
    return busy(async () => {
      menu.open = false;
      const data = await f.arrayBuffer();
      const res = await cluster.importSnapshot(data);
      if (res.error) say('persist.importFailed', { name: f.name, error: res.error }, 'error');
      else { say('persist.imported', { name: f.name }); state.notice = null; }
    });
  }

  shareBtn.addEventListener('click', () => busy(async () => {
    const res = await cluster.shareLink();
    if (res.error) {
      linkBox.hidden = true;
      say(/too large/.test(res.error) ? 'persist.linkTooLarge' : 'persist.linkFailed', { error: res.error.replace(/^snapshot: /, '') }, 'error');
      return;
    }
    const href = linkURL(location.href, res.value);
    state.lastLink = href;
    linkBox.value = href;
    linkBox.hidden = false;
    linkBox.select();
    const size = formatSize(res.value.length);
    try {
      await navigator.clipboard.writeText(href);
      say('persist.linkCopied', { size });
    } catch {
      say('persist.linkReady', { size });
    }
  }));

  // --- a share link opened -------------------------------------------------------
  function openLinkFromHash(atStart) {
    const payload = linkPayload(location.hash);
    if (payload === null) return;
    // The fragment is consumed: a reload shows the saved cluster, not the link again.
    history.replaceState(null, '', location.pathname + location.search);
    const r = cluster.restored;
    const hasSaved = atStart ? r && r.bytes > 0 && !r.error : true;
    if (hasSaved && !ask(t('persist.open.confirm'))) return;
    busy(async () => {
      const res = await cluster.openLink(payload);
      if (res.error) say('persist.openFailed', { error: res.error.replace(/^snapshot: /, '') }, 'error');
      else say('persist.opened', {});
    });
  }
  const onHash = () => { if (cluster.isReady) openLinkFromHash(false); };
  window.addEventListener('hashchange', onHash);

  draw();
  return {
    importFile,
    unmount() {
      offLang();
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('pagehide', flush);
      window.removeEventListener('hashchange', onHash);
      menu.remove();
    },
  };
}
