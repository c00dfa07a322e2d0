// The Events view: the cluster's events as a timeline, oldest first and
// the newest at the bottom, as `kubectl events` prints them (model.js). Each
// row: LAST SEEN, the type (Normal or Warning), the reason, the object it is
// about, the message, and the component that reported it. A Deployment's
// first minute reads as the seeds' story: ScalingReplicaSet from the
// deployment controller, SuccessfulCreate from the replicaset controller,
// Scheduled from the scheduler, Pulling, Pulled, Created and Started from
// each kubelet.
//
// Filters: the object (a text field; an object selected in another view
// through ctx.bus fills it) and the type. Hooks: rows [data-event] with
// data-reason, data-type and data-object ("Kind/namespace/name"); the
// filter field [data-filter=object], the type [data-filter=type], the
// count [data-events-count].

import { addStrings, t, onLang } from '../../i18n.js';
import { eventObject, eventSource, lastSeen, matches, sortEvents, eventCount } from './model.js';
import './events.css';

addStrings({
  en: {
    'events.tab': 'Events',
    'events.filter': 'Object',
    'events.filterPlaceholder': 'e.g. pod/web or deployment web',
    'events.clear': 'Clear',
    'events.type': 'Type',
    'events.allTypes': 'All types',
    'events.count': '{shown} of {total}',
    'events.empty': 'No events yet. Every component records what it does as an Event: create a Deployment and watch them arrive.',
    'events.none': 'No event matches the filter.',
    'events.col.lastSeen': 'Last seen',
    'events.col.type': 'Type',
    'events.col.reason': 'Reason',
    'events.col.object': 'Object',
    'events.col.message': 'Message',
    'events.col.source': 'Source',
    'events.times': '×{n}',
    'events.showObject': 'Show this object in the other views',
  },
  ja: {
    'events.tab': 'イベント',
    'events.filter': 'オブジェクト',
    'events.filterPlaceholder': '例: pod/web、deployment web',
    'events.clear': 'クリア',
    'events.type': '種類',
    'events.allTypes': 'すべての種類',
    'events.count': '{total} 件中 {shown} 件',
    'events.empty': 'まだイベントはありません。各コンポーネントは自分のしたことをイベントとして記録します。Deployment を作って、イベントが届くのを見てください。',
    'events.none': 'フィルターに合うイベントはありません。',
    'events.col.lastSeen': '最終発生',
    'events.col.type': '種類',
    'events.col.reason': '理由',
    'events.col.object': 'オブジェクト',
    'events.col.message': 'メッセージ',
    'events.col.source': '発生元',
    'events.times': '×{n}',
    'events.showObject': 'このオブジェクトをほかのビューで表示します',
  },
});

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

export function mount(root, ctx) {
  root.classList.add('ev-pane');
  const bar = el('div', 'ev-bar');
  const objLabel = el('label', 'ev-filter');
  const objText = el('span');
  const objWrap = el('span', 'ev-input');
  const input = el('input');
  input.type = 'search';
  input.dataset.filter = 'object';
  input.spellcheck = false;
  input.autocomplete = 'off';
  const clear = el('button', 'ev-clear', '×');
  clear.type = 'button';
  objWrap.append(input, clear);
  objLabel.append(objText, objWrap);
  const typeLabel = el('label', 'ev-filter');
  const typeText = el('span');
  const typeSelect = el('select');
  typeSelect.dataset.filter = 'type';
  typeLabel.append(typeText, typeSelect);
  const count = el('span', 'ev-count');
  count.dataset.eventsCount = '';
  bar.append(objLabel, typeLabel, count);

  const scroller = el('div', 'ev-scroll');
  const list = el('ol', 'ev-list');
  const empty = el('p', 'ev-empty');
  scroller.append(list, empty);
  root.append(bar, scroller);

  let items = new Map();
  let frame = 0;
  let visible = true;
  let filterText = '';
  let filterType = '';
  const rows = new Map(); // event key → {li, rv}

  const schedule = () => {
    if (frame || !visible) return;
    frame = requestAnimationFrame(() => { frame = 0; draw(); });
  };
  const off = ctx.cache.subscribe('/api/v1/events', (m) => {
    items = m;
    schedule();
  });
  // LAST SEEN moves with the clock.
  const tick = setInterval(() => { if (visible && items.size) ageAll(); }, 5000);

  function row(e) {
    const li = el('li', 'ev-row');
    li.dataset.event = `${e.metadata.namespace}/${e.metadata.name}`;
    return li;
  }

  function fillRow(li, e, now) {
    const type = e.type || 'Normal';
    const obj = eventObject(e);
    li.dataset.reason = e.reason || '';
    li.dataset.type = type;
    li.dataset.object = obj;
    li.classList.toggle('warning', type === 'Warning');
    const io = e.involvedObject || {};
    const objBtn = el('button', 'ev-object', `${(io.kind || '').toLowerCase()}/${io.name || ''}`);
    objBtn.type = 'button';
    objBtn.title = `${obj}\n${t('events.showObject')}`;
    const n = eventCount(e);
    const age = el('span', 'ev-age', lastSeen(e, now));
    const head = el('div', 'ev-head');
    head.append(
      el('span', `ev-type ${type === 'Warning' ? 'bad' : 'ok'}`, type),
      el('span', 'ev-reason', e.reason || ''),
      ...(n > 1 ? [el('span', 'ev-times', t('events.times', { n }))] : []),
      age,
    );
    const about = el('div', 'ev-about');
    about.append(objBtn, el('span', 'ev-src', eventSource(e)));
    const msg = el('div', 'ev-msg', e.message || '');
    li.replaceChildren(head, about, msg);
  }

  function ageAll() {
    const now = Date.now();
    for (const { li, e } of rows.values()) {
      const a = li.querySelector('.ev-age');
      if (a) a.textContent = lastSeen(e, now);
    }
  }

  function draw() {
    const now = Date.now();
    const atBottom = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
    const all = sortEvents([...items.values()]);
    const shown = all.filter((e) => matches(e, { text: filterText, type: filterType }));
    const keep = new Set();
    let prev = null;
    for (const e of shown) {
      const key = `${e.metadata.namespace}/${e.metadata.name}`;
      keep.add(key);
      let r = rows.get(key);
      if (!r) {
        r = { li: row(e), rv: '', e };
        r.li.classList.add('ev-new');
        rows.set(key, r);
      }
      if (r.rv !== e.metadata.resourceVersion || r.lang !== document.documentElement.lang) {
        r.rv = e.metadata.resourceVersion;
        r.lang = document.documentElement.lang;
        r.e = e;
        fillRow(r.li, e, now);
      }
      // Keep DOM order = sorted order, moving only what is out of place.
      const want = prev ? prev.nextSibling : list.firstChild;
      if (want !== r.li) list.insertBefore(r.li, want);
      prev = r.li;
    }
    for (const [key, r] of rows) {
      if (keep.has(key)) continue;
      r.li.remove();
      rows.delete(key);
    }
    count.textContent = t('events.count', { shown: shown.length, total: all.length });
    empty.textContent = all.length ? t('events.none') : t('events.empty');
    empty.hidden = shown.length > 0;
    clear.hidden = !filterText;
    if (atBottom) scroller.scrollTop = scroller.scrollHeight;
    // The highlight of new rows only after the first draw.
    requestAnimationFrame(() => { for (const r of rows.values()) r.li.classList.remove('ev-new'); });
  }

  input.addEventListener('input', () => {
    filterText = input.value;
    schedule();
  });
  clear.addEventListener('click', () => {
    input.value = '';
    filterText = '';
    schedule();
    input.focus();
  });
  typeSelect.addEventListener('change', () => {
    filterType = typeSelect.value;
    schedule();
  });
  list.addEventListener('click', (ev) => {
    const b = ev.target.closest('.ev-object');
    if (!b) return;
    const li = b.closest('[data-event]');
    const [kind, namespace, ...rest] = li.dataset.object.split('/');
    setFilter(li.dataset.object);
    if (ctx.bus) ctx.bus.dispatchEvent(new CustomEvent('select', { detail: { kind, namespace, name: rest.join('/'), source: 'events' } }));
  });

  function setFilter(text) {
    input.value = text;
    filterText = text;
    schedule();
  }
  const onSelect = (ev) => {
    const d = ev.detail || {};
    if (d.source === 'events' || !d.kind || !d.name) return;
    const clusterScoped = d.kind === 'Node' || d.kind === 'Namespace';
    setFilter(`${d.kind}/${clusterScoped ? '' : d.namespace || 'default'}/${d.name}`);
  };
  if (ctx.bus) ctx.bus.addEventListener('select', onSelect);
  // An object picked before this view first opened (after mount has run).
  if (ctx.selected) { const d = ctx.selected; queueMicrotask(() => onSelect({ detail: d })); }

  const offLang = onLang(() => {
    objText.textContent = t('events.filter');
    input.placeholder = t('events.filterPlaceholder');
    clear.title = t('events.clear');
    clear.setAttribute('aria-label', t('events.clear'));
    typeText.textContent = t('events.type');
    const v = typeSelect.value;
    typeSelect.replaceChildren(...[['', t('events.allTypes')], ['Normal', 'Normal'], ['Warning', 'Warning']].map(([value, text]) => {
      const o = el('option', '', text);
      o.value = value;
      return o;
    }));
    typeSelect.value = v;
    schedule();
  });

  return {
    show() { visible = true; schedule(); },
    hide() { visible = false; },
    unmount() {
      off();
      clearInterval(tick);
      if (ctx.bus) ctx.bus.removeEventListener('select', onSelect);
      offLang();
      if (frame) cancelAnimationFrame(frame);
    },
  };
}
