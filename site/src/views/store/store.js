// The Store view: etcd's keys as kube-apiserver writes them
// (/registry/<resource>/<namespace>/<name>), drawn as a tree from the
// storekeys resource (list + watch through the shared cache), each key with
// its create and mod revision and version. Click a key: its value decoded
// to YAML (what `etcdctl get` shows as protobuf bytes), every write of it
// the store still holds (storekeys/NAME/history) with a line diff between
// consecutive versions, and the store's current and compacted revision.
//
// Live and cheap: the tree model (tree.js) reports which keys and folders
// changed in a frame, and only their rows are redrawn; a folder shows its
// first keys and a button for the rest, so 100 new pods are one folder
// redraw per frame, not a new tree.
//
// Hooks: [data-store-key="/registry/..."] key rows, [data-store-folder=PATH]
// folder rows, [data-store-modrev] the selected key's modRevision.

import { addStrings, t, onLang } from '../../i18n.js';
import { toYAML } from '../objects/yaml.js'; // kubectl -o yaml's shape, shared with the Objects view
import { diffLines, hunks } from './diff.js';
import { Tree, sortedChildren } from './tree.js';
import './store.css';

addStrings({
  en: {
    'store.title': 'Store (etcd)',
    'store.head': 'etcd keys',
    'store.hint': 'Everything the cluster knows is a key in etcd, written by kube-apiserver. Open a folder, then click a key.',
    'store.revision': 'revision {rev}',
    'store.compacted': 'compacted at {rev}',
    'store.keys': '{n} keys',
    'store.more': 'Show {n} more',
    'store.empty': 'No keys yet.',
    'store.pick': 'Click a key to see its value and its history.',
    'store.create': 'create rev',
    'store.mod': 'mod rev',
    'store.version': 'version',
    'store.size': 'size',
    'store.encoding': 'encoding',
    'store.value': 'Value, decoded to YAML',
    'store.valueNote': 'Stored as {encoding} ({size} bytes); shown as kubectl get -o yaml would.',
    'store.history': 'History',
    'store.historyNote': 'Every write of this key the store still holds, newest first. Writes before the compacted revision are gone.',
    'store.rev': 'rev {rev}',
    'store.put': 'PUT · version {version}',
    'store.delete': 'DELETE',
    'store.created': 'created',
    'store.unchanged': 'the value did not change',
    'store.folded': '… {n} unchanged lines',
    'store.deleted': 'This key was deleted.',
    'store.loading': 'loading…',
    'store.failed': 'Could not read the history: {message}',
    'store.row': 'created at {c}, last written at {m}, version {v}',
    'store.legend': 'create rev · mod rev · version',
  },
  ja: {
    'store.title': 'ストア (etcd)',
    'store.head': 'etcd のキー',
    'store.hint': 'クラスターが知っていることはすべて、kube-apiserver が etcd に書いたキーです。フォルダーを開いてキーをクリックしてください。',
    'store.revision': 'リビジョン {rev}',
    'store.compacted': '{rev} までコンパクション済み',
    'store.keys': '{n} 個のキー',
    'store.more': 'あと {n} 件を表示',
    'store.empty': 'キーはまだありません。',
    'store.pick': 'キーをクリックすると、値と履歴が表示されます。',
    'store.create': '作成リビジョン',
    'store.mod': '更新リビジョン',
    'store.version': 'バージョン',
    'store.size': 'サイズ',
    'store.encoding': 'エンコーディング',
    'store.value': '値 (YAML にデコード)',
    'store.valueNote': '{encoding} で保存されています ({size} バイト)。kubectl get -o yaml と同じ形で表示しています。',
    'store.history': '履歴',
    'store.historyNote': 'ストアに残っているこのキーへの書き込みです (新しい順)。コンパクション済みのリビジョンより前の書き込みは消えています。',
    'store.rev': 'rev {rev}',
    'store.put': 'PUT · バージョン {version}',
    'store.delete': 'DELETE',
    'store.created': '作成',
    'store.unchanged': '値は変わっていません',
    'store.folded': '… 変更のない {n} 行',
    'store.deleted': 'このキーは削除されました。',
    'store.loading': '読み込み中…',
    'store.failed': '履歴を読めませんでした: {message}',
    'store.row': '作成 {c}、最終書き込み {m}、バージョン {v}',
    'store.legend': '作成リビジョン · 更新リビジョン · バージョン',
  },
});

const API = '/apis/flow.kubetab.dev/v1alpha1/storekeys';
const PAGE = 100; // keys a folder shows before its "show more" button

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

/** The storekeys name of a key: without its first "/", "/" as ".". */
export const keyName = (key) => key.slice(1).replaceAll('/', '.');

export function mount(root, ctx) {
  root.classList.add('store');
  const head = el('div', 'view-head');
  const headTitle = el('span');
  const live = el('span', 'live-state');
  head.append(headTitle, live);
  const revs = el('div', 'store-revs');
  const revNow = el('span', 'store-rev');
  const revCompact = el('span', 'store-compact');
  revs.append(revNow, revCompact);
  const hint = el('p', 'store-hint');
  const treeEl = el('div', 'store-tree');
  treeEl.setAttribute('role', 'tree');
  const legend = el('div', 'st-legend');
  const empty = el('p', 'empty');
  const detail = el('section', 'store-detail');
  // Tree and key one under the other in a narrow panel, side by side in a
  // wide one (store.css).
  const left = el('div', 'store-left');
  left.append(legend, treeEl, empty);
  const body = el('div', 'store-body');
  body.append(left, detail);
  root.append(head, revs, hint, body);

  const tree = new Tree();
  tree.root.expanded = true;
  let items = new Map();
  let state = 'connecting';
  let visible = true;
  let needFull = true;
  let selected = null; // key
  let history = null; // the StoreKeyHistory of selected
  let historyError = '';
  let store = { revision: 0, compact: 0 };

  // --- the tree ---------------------------------------------------------
  function folderRow(node, depth) {
    const wrap = el('div', 'st-node');
    const row = el('div', 'st-row st-folder');
    row.dataset.storeFolder = node.path;
    row.style.setProperty('--depth', depth);
    row.setAttribute('role', 'treeitem');
    const twist = el('span', 'st-twist');
    const name = el('span', 'st-name', node.name);
    const count = el('span', 'count');
    row.append(twist, name, count);
    row.addEventListener('click', () => {
      node.expanded = !node.expanded;
      drawFolder(node);
    });
    wrap.append(row);
    node.el = wrap;
    node.row = row;
    node.countEl = count;
    node.depth = depth;
    drawCount(node);
    return wrap;
  }

  function leafRow(node, depth) {
    const row = el('div', 'st-row st-leaf');
    row.dataset.storeKey = node.leaf.key;
    row.style.setProperty('--depth', depth);
    row.setAttribute('role', 'treeitem');
    const name = el('span', 'st-name', node.name);
    const nums = el('span', 'st-nums');
    row.append(name, nums);
    row.addEventListener('click', () => select(node.leaf.key));
    node.el = row;
    node.row = row;
    node.nums = nums;
    node.depth = depth;
    drawLeaf(node, false);
    return row;
  }

  function drawLeaf(node, flash) {
    const k = node.leaf;
    if (!k || !node.nums) return;
    node.nums.textContent = `${k.createRevision} · ${k.modRevision} · v${k.version}`;
    node.row.title = t('store.row', { c: k.createRevision, m: k.modRevision, v: k.version });
    node.row.classList.toggle('selected', k.key === selected);
    // A written key flashes (Web Animations: no style flush, however many
    // keys a frame writes).
    if (flash && node.row.animate) node.row.animate([{ backgroundColor: '#fff2c2' }, { backgroundColor: 'transparent' }], { duration: 800, easing: 'ease' });
  }

  function drawCount(node) {
    if (node.countEl) node.countEl.textContent = String(node.count);
    if (node.row) node.row.setAttribute('aria-expanded', node.expanded ? 'true' : 'false');
  }

  function isFolder(node) { return node.children.size > 0 || !node.leaf; }

  // drawFolder redraws one folder's child list (when it is open).
  function drawFolder(node) {
    drawCount(node);
    const container = node === tree.root ? treeEl : node.el;
    if (!container) return;
    if (!node.kids) {
      if (!node.expanded) return;
      node.kids = el('div', 'st-kids');
      node.kids.setAttribute('role', 'group');
      container.append(node.kids);
    }
    if (!node.expanded) {
      node.kids.hidden = true;
      return;
    }
    node.kids.hidden = false;
    const depth = node === tree.root ? 0 : node.depth + 1;
    const kids = sortedChildren(node);
    const limit = node.limit || PAGE;
    const shown = [];
    for (const child of kids.slice(0, limit)) {
      const folder = isFolder(child);
      // /registry opens by itself: the resources are the first thing to see.
      if (child.expanded === undefined) child.expanded = child.path === '/registry';
      if (!child.el || child.elFolder !== folder) {
        child.el = null; child.row = null; child.kids = null; child.nums = null; child.countEl = null;
        if (folder) folderRow(child, depth); else leafRow(child, depth);
        child.elFolder = folder;
        if (folder && child.expanded) drawFolder(child);
      }
      shown.push(child.el);
    }
    if (kids.length > limit) {
      if (!node.moreEl) {
        node.moreEl = el('button', 'st-more');
        node.moreEl.type = 'button';
        node.moreEl.addEventListener('click', () => { node.limit = (node.limit || PAGE) + 500; drawFolder(node); });
      }
      node.moreEl.textContent = t('store.more', { n: Math.min(kids.length - limit, 500) });
      node.moreEl.style.setProperty('--depth', depth);
      shown.push(node.moreEl);
    }
    placeChildren(node.kids, shown);
  }

  // placeChildren makes box's children the elements of want, in order,
  // moving only what is out of place: a new key is one insertBefore, not a
  // folder rebuilt (which would restyle every row in it).
  function placeChildren(box, want) {
    const keep = new Set(want);
    for (const c of [...box.children]) if (!keep.has(c)) c.remove();
    let cursor = box.firstElementChild;
    for (const e of want) {
      if (e === cursor) { cursor = cursor.nextElementSibling; continue; }
      box.insertBefore(e, cursor);
    }
  }

  // While the pointer moves on the tree (the learner is aiming at a row),
  // folders that gained or lost keys wait to be redrawn: a row appearing
  // above the one about to be clicked would move it away. Counts and a
  // key's numbers still update (they move nothing). What waited is drawn
  // when the pointer leaves or rests for a moment.
  // A test hook: root.storeHold (has: is path in the model, drawn or not).
  const hold = { ms: 1200, state: () => ({ aiming, held: held.size }), has: (path) => !!tree.find(path) };
  root.storeHold = hold;
  let aiming = false;
  let restTimer = 0;
  const held = new Set();
  function drawHeld() {
    aiming = false;
    clearTimeout(restTimer);
    const folders = [...held];
    held.clear();
    if (!visible) { if (folders.length) needFull = true; return; }
    for (const f of folders) drawFolder(f);
  }
  treeEl.addEventListener('pointermove', () => {
    aiming = true;
    clearTimeout(restTimer);
    restTimer = setTimeout(drawHeld, hold.ms);
  });
  treeEl.addEventListener('pointerleave', drawHeld);

  function drawAll() {
    needFull = false;
    const reset = (n) => { n.el = null; n.row = null; n.kids = null; n.nums = null; n.countEl = null; n.moreEl = null; n.children.forEach(reset); };
    reset(tree.root);
    treeEl.replaceChildren();
    drawFolder(tree.root);
  }

  // What a redraw costs (a test hook: the benchmark reports it).
  const stats = { frames: 0, totalMs: 0, maxMs: 0 };
  root.storeStats = stats;
  function onItems(next, st) {
    const t0 = performance.now();
    draw(next, st);
    const ms = performance.now() - t0;
    stats.frames++;
    stats.totalMs += ms;
    stats.maxMs = Math.max(stats.maxMs, ms);
  }

  function draw(next, st) {
    items = next;
    state = st;
    live.dataset.state = st;
    live.textContent = t(`cluster.${st}`);
    const ch = tree.update(items);
    empty.hidden = tree.root.count > 0;
    if (!visible) { needFull = true; return; }
    if (needFull) {
      held.clear();
      drawAll();
    } else {
      if (aiming) {
        for (const f of ch.folders) held.add(f);
      } else {
        for (const f of ch.folders) drawFolder(f);
      }
      for (const n of ch.counted) drawCount(n);
      // Flash the written keys when there are few; a burst (100 pods at
      // once) only updates the numbers, since an animation per row costs a
      // style pass per row per frame.
      const flash = ch.leaves.size <= 12;
      for (const n of ch.leaves) if (n.leaf && n.nums) drawLeaf(n, flash);
    }
    if (selected && [...ch.leaves].some((n) => n.path === selected)) {
      drawDetail();
      loadHistory();
    } else if (ch.leaves.size) {
      loadRevision();
    }
  }

  // --- the selected key ---------------------------------------------------
  function select(key) {
    const prev = selected && tree.byKey.get(selected);
    selected = key;
    if (prev && prev.row) prev.row.classList.remove('selected');
    const node = tree.byKey.get(key);
    if (node) {
      // Open the folders down to it, so it is in view.
      const chain = [];
      for (let n = node.parent; n && n !== tree.root; n = n.parent) chain.unshift(n);
      for (const f of chain) if (!f.expanded) { f.expanded = true; drawFolder(f); }
      if (node.row) {
        node.row.classList.add('selected');
        node.row.scrollIntoView({ block: 'nearest' });
      }
    }
    history = null;
    historyError = '';
    drawDetail();
    loadHistory();
  }

  let loading = null;
  let again = false;
  async function loadHistory() {
    if (!selected) return;
    if (loading) { again = true; return; }
    const key = selected;
    loading = (async () => {
      try {
        const res = await ctx.cluster.fetch(`${API}/${encodeURIComponent(keyName(key))}/history`, { headers: { Accept: 'application/json' } });
        const body = await res.json();
        if (key !== selected) return;
        if (!res.ok) { historyError = body.message || String(res.status); history = null; }
        else {
          history = body;
          historyError = '';
          store = { revision: body.revision, compact: body.compactRevision };
        }
      } catch (err) {
        historyError = err.message;
      }
      drawRevs();
      drawHistory();
    })();
    await loading;
    loading = null;
    if (again) { again = false; loadHistory(); }
  }

  // loadRevision reads the store's revision when no key is selected (a
  // history read of one key is the cheapest read that carries it),
  // at most twice a second.
  let revTimer = 0;
  function loadRevision() {
    if (revTimer) return;
    revTimer = setTimeout(async () => {
      revTimer = 0;
      if (selected) return;
      try {
        const res = await ctx.cluster.fetch(`${API}/registry.namespaces.default/history`, { headers: { Accept: 'application/json' } });
        if (!res.ok) return;
        const body = await res.json();
        store = { revision: body.revision, compact: body.compactRevision };
        drawRevs();
      } catch { /* the next write tries again */ }
    }, 500);
  }

  function drawRevs() {
    revNow.textContent = store.revision ? t('store.revision', { rev: store.revision }) : '';
    revNow.dataset.storeRevision = String(store.revision || '');
    revCompact.textContent = store.revision ? t('store.compacted', { rev: store.compact }) : '';
    revCompact.dataset.storeCompact = String(store.compact || '');
  }

  let historyEl = null;
  function drawDetail() {
    detail.replaceChildren();
    if (!selected) {
      detail.append(el('p', 'store-pick', t('store.pick')));
      return;
    }
    const node = tree.byKey.get(selected);
    const k = node && node.leaf;
    const keyEl = el('div', 'store-key', selected);
    detail.append(keyEl);
    if (!k) {
      detail.append(el('p', 'store-gone', t('store.deleted')));
    } else {
      const dl = el('dl', 'store-meta');
      const meta = [
        ['store.create', k.createRevision],
        ['store.mod', k.modRevision, 'storeModrev'],
        ['store.version', k.version],
        ['store.size', k.size],
      ];
      for (const [label, value, hook] of meta) {
        const box = el('div');
        const dd = el('dd', '', String(value));
        if (hook) dd.dataset[hook] = String(value);
        box.append(el('dt', '', t(label)), dd);
        dl.append(box);
      }
      detail.append(dl);
      detail.append(el('h4', '', t('store.value')));
      detail.append(el('p', 'store-note', t('store.valueNote', { encoding: k.encoding || '?', size: k.size })));
      const pre = el('pre', 'store-yaml', k.value ? toYAML(k.value) : '');
      pre.dataset.storeYaml = '';
      detail.append(pre);
    }
    detail.append(el('h4', '', t('store.history')));
    detail.append(el('p', 'store-note', t('store.historyNote')));
    historyEl = el('ol', 'store-history');
    detail.append(historyEl);
    drawHistory();
  }

  function drawHistory() {
    if (!historyEl) return;
    historyEl.replaceChildren();
    if (historyError) { historyEl.append(el('li', 'store-failed', t('store.failed', { message: historyError }))); return; }
    if (!history) { historyEl.append(el('li', 'store-note', t('store.loading'))); return; }
    const list = history.revisions || [];
    const yamls = list.map((r) => (r.type === 'PUT' && r.value ? toYAML(r.value) : ''));
    for (let i = list.length - 1; i >= 0; i--) {
      const r = list[i];
      const li = el('li', 'store-write');
      li.dataset.storeRev = String(r.modRevision);
      const d = el('details');
      d.open = i === list.length - 1;
      const sum = el('summary');
      const put = r.type === 'PUT';
      sum.append(el('span', 'store-revno', t('store.rev', { rev: r.modRevision })),
        el('span', put ? 'badge ok' : 'badge bad', put ? t('store.put', { version: r.version }) : t('store.delete')));
      if (put && r.createRevision === r.modRevision) sum.append(el('span', 'store-tag', t('store.created')));
      d.append(sum);
      const body = el('pre', 'store-diff');
      const prev = i > 0 && list[i - 1].type === 'PUT' ? yamls[i - 1] : null;
      if (!put) {
        drawDiff(body, hunks(diffLines(prev || '', ''), 0).slice(0, 12));
      } else if (prev === null) {
        // The first write kept: all of it is new if it created the key;
        // otherwise the writes before it were compacted away.
        const op = r.createRevision === r.modRevision ? '+' : ' ';
        drawDiff(body, yamls[i].replace(/\n$/, '').split('\n').map((line) => ({ op, line })));
      } else {
        const lines = hunks(diffLines(prev, yamls[i]), 2);
        if (lines.some((l) => l.op === '+' || l.op === '-')) drawDiff(body, lines);
        else body.append(el('span', 'dl-fold', t('store.unchanged')));
      }
      d.append(body);
      li.append(d);
      historyEl.append(li);
    }
  }

  function drawDiff(pre, lines) {
    const frag = document.createDocumentFragment();
    for (const l of lines) {
      if (l.op === '…') { frag.append(el('span', 'dl-fold', t('store.folded', { n: l.count }) + '\n')); continue; }
      const cls = l.op === '+' ? 'dl-add' : l.op === '-' ? 'dl-del' : 'dl-same';
      frag.append(el('span', cls, `${l.op} ${l.line}\n`));
    }
    pre.append(frag);
  }

  // Another view pointing at an object (kind, namespace, name): select its key.
  const onSelect = (ev) => {
    const { namespace = '', name, kind = '' } = ev.detail || {};
    if (!name) return;
    const plural = kind.toLowerCase() + 's';
    for (const k of items.values()) {
      const o = k.object || {};
      if (o.name === name && (o.namespace || '') === namespace && (!kind || o.resource.split('.')[0] === plural)) {
        select(k.key);
        return;
      }
    }
  };
  ctx.bus.addEventListener('select', onSelect);

  const offLang = onLang(() => {
    headTitle.textContent = t('store.head');
    hint.textContent = t('store.hint');
    legend.textContent = t('store.legend');
    empty.textContent = t('store.empty');
    live.textContent = t(`cluster.${state}`);
    drawRevs();
    if (visible) drawAll();
    drawDetail();
  });
  const off = ctx.cache.subscribe(API, onItems);
  drawDetail();

  // Test hook: select a key as a click would.
  root.storeSelect = select;

  return {
    show() { visible = true; if (needFull) drawAll(); },
    hide() { visible = false; },
    unmount() { off(); offLang(); ctx.bus.removeEventListener('select', onSelect); clearTimeout(revTimer); },
  };
}
