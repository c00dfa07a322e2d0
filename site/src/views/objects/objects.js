// The Objects view: the cluster's objects as a live graph, owners on the
// left (graph.js has the model: Deployment → ReplicaSets → Pods → Nodes,
// Service → EndpointSlices → Pods), like Headlamp's map view. Everything
// comes from the page's shared informer cache, so the graph moves as the
// controllers work: during `kubectl set image` the new ReplicaSet's count
// grows while the old one's shrinks, and pods appear and leave.
//
// Click an object for its details: its YAML (a GET of the object as JSON,
// written as kubectl -o yaml writes it; yaml.js), `kubectl describe` (run in
// the worker's console shell, its output kept here rather than printed in
// the console; bridge.js capture), and its events (involvedObject = it).
//
// Hooks for tests: each box [data-object="Kind/namespace/name"]
// ("Node//name" for a node), a group of collapsed pods
// [data-group="ReplicaSet/ns/name"][data-count], each edge
// [data-edge="from->to"]; the details [data-details][data-object], its tabs
// [data-details-tab=yaml|describe|events], panes [data-details-pane=...],
// its events [data-object-event][data-reason]; .og-canvas[data-moving] while
// boxes are still moving to their places.
//
// The view and ctx.bus: a click dispatches 'select' ({kind, namespace,
// name, source: 'objects'}); a 'select' from another view selects that
// object here.

import { addStrings, t, onLang } from '../../i18n.js';
import { build, layout, edgePath, parseId } from './graph.js';
import { toYAML } from './yaml.js';
import { eventTime, lastSeen } from '../events/model.js';
import './objects.css';

addStrings({
  en: {
    'objects.tab': 'Objects',
    'objects.namespace': 'Namespace',
    'objects.allNamespaces': 'All namespaces',
    'objects.col.0': 'Deployments · Services',
    'objects.col.1': 'ReplicaSets · EndpointSlices',
    'objects.col.2': 'Pods',
    'objects.col.3': 'Nodes',
    'objects.colShort.0': 'deploy · svc',
    'objects.colShort.1': 'rs · eps',
    'objects.colShort.2': 'pods',
    'objects.colShort.3': 'nodes',
    'objects.readyShort': '{ready}/{desired}',
    'objects.empty': 'No Deployments, Services or Pods here yet. Try kubectl create deployment web --image=hello --replicas=3',
    'objects.hint': 'Click an object for its YAML, kubectl describe and its events.',
    'objects.ready': '{ready}/{desired} ready',
    'objects.readyTitle': '{ready} of {desired} replicas ready',
    'objects.rev': 'rev {n}',
    'objects.rsTitle': 'ReplicaSet {name}: revision {rev}, pod-template-hash {hash}; desired {desired}, current {current}, ready {ready}',
    'objects.nodePods': '{n} pods',
    'objects.nodePod': '{n} pod',
    'objects.endpoints': '{ready}/{n} ready',
    'objects.group': '{n} Pods',
    'objects.groupTitle': '{n} pods of {owner} (drawn as one box when there are many); click to show each',
    'objects.groupOther': 'other pods',
    'objects.fold': 'fold',
    'objects.foldTitle': 'Draw these pods as one box again',
    'objects.tab.yaml': 'YAML',
    'objects.tab.describe': 'Describe',
    'objects.tab.events': 'Events',
    'objects.close': 'Close',
    'objects.loading': 'Loading…',
    'objects.gone': 'This object no longer exists; what was last seen is shown.',
    'objects.refresh': 'Refresh',
    'objects.runInConsole': 'Run in the console',
    'objects.noEvents': 'No events for this object (events expire after an hour).',
    'objects.failed': 'Failed: {message}',
  },
  ja: {
    'objects.tab': 'オブジェクト',
    'objects.namespace': 'Namespace',
    'objects.allNamespaces': 'すべての Namespace',
    'objects.col.0': 'Deployment・Service',
    'objects.col.1': 'ReplicaSet・EndpointSlice',
    'objects.col.2': 'Pod',
    'objects.col.3': 'ノード',
    'objects.colShort.0': 'deploy・svc',
    'objects.colShort.1': 'rs・eps',
    'objects.colShort.2': 'Pod',
    'objects.colShort.3': 'ノード',
    'objects.readyShort': '{ready}/{desired}',
    'objects.empty': 'まだ Deployment、Service、Pod はありません。kubectl create deployment web --image=hello --replicas=3 を試してください。',
    'objects.hint': 'オブジェクトをクリックすると、YAML、kubectl describe、イベントを表示します。',
    'objects.ready': '{ready}/{desired} Ready',
    'objects.readyTitle': 'レプリカ {desired} 個のうち {ready} 個が Ready です',
    'objects.rev': 'rev {n}',
    'objects.rsTitle': 'ReplicaSet {name}: リビジョン {rev}、pod-template-hash {hash}。desired {desired}、current {current}、ready {ready}',
    'objects.nodePods': 'Pod {n} 個',
    'objects.nodePod': 'Pod {n} 個',
    'objects.endpoints': '{ready}/{n} Ready',
    'objects.group': 'Pod {n} 個',
    'objects.groupTitle': '{owner} の Pod {n} 個です（多いときは 1 つの箱にまとめて描きます）。クリックすると 1 つずつ表示します',
    'objects.groupOther': 'そのほかの Pod',
    'objects.fold': 'まとめる',
    'objects.foldTitle': 'これらの Pod をまた 1 つの箱にまとめます',
    'objects.tab.yaml': 'YAML',
    'objects.tab.describe': 'Describe',
    'objects.tab.events': 'イベント',
    'objects.close': '閉じる',
    'objects.loading': '読み込み中…',
    'objects.gone': 'このオブジェクトはもうありません。最後に見えた内容を表示しています。',
    'objects.refresh': '更新',
    'objects.runInConsole': 'コンソールで実行',
    'objects.noEvents': 'このオブジェクトのイベントはありません（イベントは 1 時間で消えます）。',
    'objects.failed': '失敗しました: {message}',
  },
});

// The collections the graph watches, and how to GET one object of a kind.
const collections = {
  deployments: '/apis/apps/v1/deployments',
  replicasets: '/apis/apps/v1/replicasets',
  pods: '/api/v1/pods',
  nodes: '/api/v1/nodes',
  services: '/api/v1/services',
  endpointslices: '/apis/discovery.k8s.io/v1/endpointslices',
};
const kinds = {
  Deployment: { group: '/apis/apps/v1', resource: 'deployments', short: 'deploy', cli: 'deployment' },
  ReplicaSet: { group: '/apis/apps/v1', resource: 'replicasets', short: 'rs', cli: 'replicaset' },
  Pod: { group: '/api/v1', resource: 'pods', short: 'pod', cli: 'pod' },
  Node: { group: '/api/v1', resource: 'nodes', short: 'node', cli: 'node', cluster: true },
  Service: { group: '/api/v1', resource: 'services', short: 'svc', cli: 'service' },
  EndpointSlice: { group: '/apis/discovery.k8s.io/v1', resource: 'endpointslices', short: 'eps', cli: 'endpointslice' },
};

/** objectPath is the API path of one object. */
export function objectPath(kind, namespace, name) {
  const k = kinds[kind];
  if (!k) return null;
  const ns = k.cluster || !namespace ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${k.group}${ns}/${k.resource}/${encodeURIComponent(name)}`;
}

/** kindOf normalizes a kind a bus event names (Pod, pod, pods, deploy) to ours, or ''. */
function kindOf(s) {
  const l = String(s || '').toLowerCase();
  for (const [kind, k] of Object.entries(kinds)) {
    if (l === kind.toLowerCase() || l === k.resource || l === k.short || l === k.cli) return kind;
  }
  return '';
}

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const SVG = 'http://www.w3.org/2000/svg';

// kubectl's ANSI colours, should describe ever print any.
// eslint-disable-next-line no-control-regex
const stripANSI = (s) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

export function mount(root, ctx) {
  root.classList.add('og-pane');
  const bar = el('div', 'og-bar');
  const nsLabel = el('label', 'og-ns');
  const nsText = el('span');
  const nsSelect = el('select');
  nsSelect.dataset.namespace = '';
  nsLabel.append(nsText, nsSelect);
  const hint = el('span', 'og-hint');
  bar.append(nsLabel, hint);

  const body = el('div', 'og-body');
  const graph = el('div', 'og-graph');
  const heads = el('div', 'og-heads');
  const canvas = el('div', 'og-canvas');
  const svg = document.createElementNS(SVG, 'svg');
  svg.classList.add('og-edges');
  svg.setAttribute('aria-hidden', 'true');
  canvas.append(svg);
  const empty = el('p', 'og-empty');
  graph.append(heads, canvas, empty);

  const details = el('section', 'og-details');
  details.dataset.details = '';
  details.hidden = true;
  body.append(graph, details);
  root.append(bar, body);

  // --- state -------------------------------------------------------------
  const data = {};
  let namespace = 'default'; // as kubectl: the default namespace until another is chosen
  let selected = ''; // an object id
  const expanded = new Set(); // ReplicaSet ids whose pods are drawn one by one
  let width = 0;
  let frame = 0;
  let visible = true;
  let model = null;
  const boxes = new Map(); // id → {el, x, y (drawn now), tx, ty (wanted), w, h, op, top (opacity now, wanted)}
  const paths = new Map(); // edge id → {path, label, from, to, d}

  const schedule = () => {
    if (frame || !visible) return;
    frame = requestAnimationFrame(() => { frame = 0; draw(); });
  };
  let events = new Map();

  // The namespace list: the namespaces objects are in, and the chosen one.
  let nsKnown = '';
  function namespacesChanged() {
    const set = new Set(['default']);
    for (const m of [data.pods, data.deployments, data.services]) {
      if (m) for (const o of m.values()) set.add(o.metadata.namespace);
    }
    if (namespace) set.add(namespace);
    const list = [...set].sort();
    const key = list.join(',');
    if (key === nsKnown) return;
    nsKnown = key;
    nsSelect.replaceChildren();
    const all = el('option', '', t('objects.allNamespaces'));
    all.value = '';
    nsSelect.append(all, ...list.map((n) => { const o = el('option', '', n); o.value = n; return o; }));
    nsSelect.value = namespace;
  }
  nsSelect.addEventListener('change', () => {
    namespace = nsSelect.value;
    schedule();
  });

  // --- drawing -----------------------------------------------------------
  const ro = new ResizeObserver(() => {
    const w = graph.clientWidth - 16;
    chooseLayout();
    if (Math.abs(w - width) >= 1) {
      width = w;
      schedule();
    }
  });
  ro.observe(graph);
  ro.observe(body);

  function draw() {
    model = build(data, { namespace, expanded });
    const narrow = width < 560;
    const box = layout(model, {
      width: Math.max(width, 200), gap: narrow ? 10 : 22, vgap: 6, minColumn: 62,
      weights: narrow ? [0.95, 1.15, 1.05, 0.92] : undefined,
    });
    canvas.style.width = `${box.width}px`;
    canvas.style.height = `${box.height}px`;
    canvas.classList.toggle('og-narrow', box.colW[1] < 120);
    svg.setAttribute('width', box.width);
    svg.setAttribute('height', box.height);
    svg.setAttribute('viewBox', `0 0 ${box.width} ${box.height}`);
    heads.style.width = `${box.width}px`;
    heads.classList.toggle('og-narrow', box.colW[1] < 120);
    [...heads.children].forEach((h, i) => {
      h.style.left = `${box.colX[i]}px`;
      h.style.width = `${box.colW[i]}px`;
    });
    const hasObjects = model.nodes.some((n) => n.kind !== 'Node');
    empty.hidden = hasObjects;

    const seen = new Set();
    for (const n of model.nodes) {
      seen.add(n.id);
      let r = boxes.get(n.id);
      if (!r) {
        const b = el('button', `og-box og-${n.kind}`);
        b.type = 'button';
        if (n.kind === 'Pods') b.dataset.group = n.group;
        else b.dataset.object = n.id;
        canvas.append(b);
        // A new box fades in where it belongs; one that comes back from
        // leaving (a pod recreated with the same name) fades back.
        r = { el: b, x: n.x, y: n.y, op: 0 };
        boxes.set(n.id, r);
      }
      r.el.classList.remove('og-leave');
      r.tx = n.x;
      r.ty = n.y;
      r.top = 1;
      r.w = n.w;
      r.h = n.h;
      r.el.style.width = `${n.w}px`;
      r.el.style.height = `${n.h}px`;
      fill(r.el, n);
    }
    for (const [id, r] of boxes) {
      if (seen.has(id) || r.top === 0) continue;
      r.el.classList.add('og-leave');
      r.top = 0;
    }

    const seenE = new Set();
    for (const e of model.edges) {
      seenE.add(e.id);
      let p = paths.get(e.id);
      if (!p) {
        const path = document.createElementNS(SVG, 'path');
        path.dataset.edge = e.id;
        path.setAttribute('class', `og-edge og-edge-${model.byId.get(e.from).kind}-${model.byId.get(e.to).kind}`);
        svg.append(path);
        p = { path, label: null, from: e.from, to: e.to, d: '' };
        paths.set(e.id, p);
      }
      p.path.dataset.count = e.count;
      if (e.count > 1) {
        if (!p.label) {
          p.label = document.createElementNS(SVG, 'text');
          p.label.setAttribute('class', 'og-count');
          svg.append(p.label);
        }
        p.label.textContent = String(e.count);
      } else if (p.label) {
        p.label.remove();
        p.label = null;
      }
    }
    for (const [id, p] of paths) {
      if (seenE.has(id)) continue;
      p.path.remove();
      if (p.label) p.label.remove();
      paths.delete(id);
    }
    highlight();
    step(performance.now());
    if (selected) refreshSelected();
  }

  // step moves every box a little towards where the layout wants it (and
  // fades boxes in and out), redrawing the edges from where the boxes are
  // now, so that the lines follow the boxes; it runs in animation frames
  // until nothing moves. Done here rather than with CSS transitions so that
  // edges and boxes move together.
  let anim = 0;
  let lastStep = 0;
  function step(now) {
    anim = 0;
    const dt = lastStep ? Math.min(250, Math.max(0, now - lastStep)) : 16;
    lastStep = now;
    const k = 1 - Math.exp(-dt / 70);
    let moving = false;
    for (const [id, r] of boxes) {
      const dx = r.tx - r.x;
      const dy = r.ty - r.y;
      const dop = r.top - r.op;
      if (Math.abs(dx) < 0.5 && Math.abs(dy) < 0.5 && Math.abs(dop) < 0.03) {
        r.x = r.tx;
        r.y = r.ty;
        r.op = r.top;
      } else {
        r.x += dx * k;
        r.y += dy * k;
        r.op += dop * k;
        moving = true;
      }
      if (r.top === 0 && r.op === 0) {
        r.el.remove();
        boxes.delete(id);
        continue;
      }
      const tr = `translate(${Math.round(r.x * 2) / 2}px, ${Math.round(r.y * 2) / 2}px)`;
      if (r.el.style.transform !== tr) r.el.style.transform = tr;
      const op = r.op >= 1 ? '' : String(Math.round(r.op * 100) / 100);
      if (r.el.style.opacity !== op) r.el.style.opacity = op;
    }
    for (const p of paths.values()) {
      const a = boxes.get(p.from);
      const z = boxes.get(p.to);
      if (!a || !z) continue;
      const d = edgePath(a, z);
      if (d !== p.d) {
        p.d = d;
        p.path.setAttribute('d', d);
        if (p.label) {
          p.label.setAttribute('x', a.x + a.w + (z.x - a.x - a.w) / 2);
          p.label.setAttribute('y', (a.y + a.h / 2 + z.y + z.h / 2) / 2 - 3);
        }
      }
    }
    if (moving) {
      canvas.dataset.moving = '';
      if (!anim) anim = requestAnimationFrame(step);
    } else {
      delete canvas.dataset.moving;
      lastStep = 0;
    }
  }

  // fill writes a box's text; only what changed is touched.
  function fill(b, n) {
    const narrow = canvas.classList.contains('og-narrow');
    const readyText = (ready, desired) => el('span', `og-ready ${ready >= desired ? 'ok' : 'wait'}`,
      t(narrow ? 'objects.readyShort' : 'objects.ready', { ready, desired }));
    const key = JSON.stringify([n.label, n.name, n.status, n.desired, n.ready, n.current, n.revision, n.count, n.counts, n.pods,
      n.endpoints, n.readyEndpoints, n.clusterIP, n.type, n.collapsed, n.expandable, document.documentElement.lang, narrow]);
    if (b.dataset.key === key) return;
    b.dataset.key = key;
    const top = el('span', 'og-l1');
    const sub = el('span', 'og-l2');
    const kind = el('span', 'og-kind', n.kind === 'Pods' ? 'pods' : kinds[n.kind].short);
    b.classList.remove('ok', 'wait', 'bad', 'og-zero');
    b.title = '';
    switch (n.kind) {
      case 'Deployment':
        top.append(kind, el('span', 'og-name', n.name));
        sub.append(readyText(n.ready, n.desired), el('span', 'og-rev', t('objects.rev', { n: n.revision })));
        b.title = `Deployment ${n.namespace}/${n.name}\n${t('objects.readyTitle', { ready: n.ready, desired: n.desired })}`;
        break;
      case 'ReplicaSet': {
        top.append(kind, el('span', 'og-name', narrow && n.hash ? n.hash : n.label));
        sub.append(readyText(n.ready, n.desired), el('span', 'og-rev', t('objects.rev', { n: n.revision })));
        if (n.expandable && !n.collapsed) {
          const fold = el('span', 'og-fold', t('objects.fold'));
          fold.dataset.fold = n.id;
          fold.title = t('objects.foldTitle');
          sub.append(fold);
        }
        if (n.desired === 0 && n.current === 0) b.classList.add('og-zero');
        b.title = t('objects.rsTitle', { name: n.name, rev: n.revision, hash: n.hash, desired: n.desired, current: n.current, ready: n.ready });
        break;
      }
      case 'Pod':
        b.classList.add(n.cls);
        top.append(el('span', `og-dot ${n.cls}`), el('span', 'og-name', n.label));
        sub.append(el('span', 'og-status', n.status));
        b.title = `Pod ${n.namespace}/${n.name}\n${n.status}${n.node ? ` · ${n.node}` : ''}`;
        break;
      case 'Pods': {
        top.append(el('span', 'og-name', t('objects.group', { n: n.count })));
        for (const c of ['ok', 'wait', 'bad']) {
          if (n.counts[c]) sub.append(el('span', `og-tally ${c}`, String(n.counts[c])));
        }
        b.dataset.count = n.count;
        const owner = n.group.startsWith('ReplicaSet/') ? parseId(n.group).name : t('objects.groupOther');
        b.title = t('objects.groupTitle', { n: n.count, owner });
        break;
      }
      case 'Node':
        b.classList.add(n.cls);
        top.append(el('span', `og-dot ${n.cls}`), el('span', 'og-name', n.name));
        // Narrow: the status when it is not Ready, else the pod count.
        if (!narrow || n.status !== 'Ready') sub.append(el('span', 'og-status', n.status));
        if (!narrow || n.status === 'Ready') sub.append(el('span', 'og-rev', t(n.pods === 1 ? 'objects.nodePod' : 'objects.nodePods', { n: n.pods })));
        b.title = `Node ${n.name}\n${n.status}`;
        break;
      case 'Service':
        top.append(kind, el('span', 'og-name', n.name));
        sub.append(el('span', 'og-status', n.clusterIP && n.clusterIP !== 'None' ? n.clusterIP : n.type));
        b.title = `Service ${n.namespace}/${n.name}\n${n.type} ${n.clusterIP} ${n.ports}`;
        break;
      case 'EndpointSlice':
        top.append(kind, el('span', 'og-name', n.label));
        sub.append(el('span', 'og-status', t('objects.endpoints', { ready: n.readyEndpoints, n: n.endpoints })));
        b.title = `EndpointSlice ${n.namespace}/${n.name}`;
        break;
    }
    b.replaceChildren(top, sub);
  }

  // The selected object, what it owns and what owns it stand out.
  function highlight() {
    for (const r of boxes.values()) r.el.classList.remove('og-selected', 'og-related');
    for (const p of paths.values()) p.path.classList.remove('og-related');
    canvas.classList.toggle('og-focus', !!selected && !!model && model.byId.has(selected));
    if (!selected || !model || !model.byId.has(selected)) return;
    const down = new Map();
    const up = new Map();
    for (const e of model.edges) {
      if (!down.has(e.from)) down.set(e.from, []);
      down.get(e.from).push(e);
      if (!up.has(e.to)) up.set(e.to, []);
      up.get(e.to).push(e);
    }
    const walk = (start, next, key) => {
      const seen = new Set([start]);
      const stack = [start];
      while (stack.length) {
        const id = stack.pop();
        for (const e of next.get(id) || []) {
          paths.get(e.id)?.path.classList.add('og-related');
          const to = e[key];
          if (!seen.has(to)) {
            seen.add(to);
            // Stop at nodes: a node's other pods are not this object's.
            if (!to.startsWith('Node/')) stack.push(to);
            boxes.get(to)?.el.classList.add('og-related');
          }
        }
      }
    };
    walk(selected, down, 'to');
    walk(selected, up, 'from');
    boxes.get(selected)?.el.classList.add('og-selected');
  }

  canvas.addEventListener('click', (ev) => {
    const fold = ev.target.closest('[data-fold]');
    if (fold) {
      ev.stopPropagation();
      expanded.delete(fold.dataset.fold);
      schedule();
      return;
    }
    const b = ev.target.closest('.og-box');
    if (!b) return;
    if (b.dataset.group) {
      expanded.add(b.dataset.group);
      schedule();
      return;
    }
    select(b.dataset.object, true);
  });

  // --- the details -------------------------------------------------------
  const dHead = el('header', 'og-dhead');
  const dKind = el('span', 'og-dkind');
  const dName = el('span', 'og-dname');
  const dClose = el('button', 'og-close', '×');
  dClose.type = 'button';
  dHead.append(dKind, dName, dClose);
  const dTabs = el('nav', 'og-dtabs');
  dTabs.setAttribute('role', 'tablist');
  const panes = {};
  const tabButtons = {};
  for (const name of ['yaml', 'describe', 'events']) {
    const b = el('button', 'og-dtab');
    b.type = 'button';
    b.dataset.detailsTab = name;
    b.setAttribute('role', 'tab');
    b.addEventListener('click', () => showTab(name));
    tabButtons[name] = b;
    dTabs.append(b);
    const p = el('div', 'og-dpane');
    p.dataset.detailsPane = name;
    p.hidden = true;
    panes[name] = p;
  }
  const cmdLine = el('div', 'og-cmd');
  const cmdText = el('code');
  const cmdRun = el('button', 'og-run');
  cmdRun.type = 'button';
  const cmdRefresh = el('button', 'og-refresh');
  cmdRefresh.type = 'button';
  cmdLine.append(cmdText, cmdRefresh, cmdRun);
  const note = el('p', 'og-note');
  note.hidden = true;
  const yamlPre = el('pre', 'og-yaml');
  panes.yaml.append(yamlPre);
  const describePre = el('pre', 'og-describe');
  panes.describe.append(describePre);
  const eventList = el('ol', 'og-events');
  const noEvents = el('p', 'og-none');
  panes.events.append(eventList, noEvents);
  const dBody = el('div', 'og-dbody');
  dBody.append(note, ...Object.values(panes));
  details.append(dHead, dTabs, cmdLine, dBody);

  let tab = 'yaml';
  let yamlRV = '';
  let yamlBusy = false;
  let yamlAgain = false;
  let describeRun = 0;

  dClose.addEventListener('click', () => {
    selected = '';
    details.hidden = true;
    body.classList.remove('og-open');
    hint.hidden = false;
    chooseLayout();
    highlight();
  });
  cmdRun.addEventListener('click', () => { if (ctx.run) ctx.run(cmdText.textContent); });
  cmdRefresh.addEventListener('click', () => {
    if (tab === 'describe') runDescribe();
    else if (tab === 'yaml') loadYAML();
  });

  function commandFor(name) {
    if (!selected) return '';
    const { kind, namespace: ns, name: n } = parseId(selected);
    const k = kinds[kind];
    const nsFlag = k.cluster ? '' : ` -n ${ns}`;
    if (name === 'yaml') return `kubectl get ${k.cli} ${n}${nsFlag} -o yaml`;
    if (name === 'describe') return `kubectl describe ${k.cli} ${n}${nsFlag}`;
    return `kubectl events --for ${k.cli}/${n}${nsFlag}`;
  }

  function showTab(name) {
    tab = name;
    for (const [k, b] of Object.entries(tabButtons)) b.setAttribute('aria-selected', String(k === name));
    for (const [k, p] of Object.entries(panes)) p.hidden = k !== name;
    cmdText.textContent = commandFor(name);
    cmdRefresh.hidden = name === 'events';
    if (name === 'describe' && describeRun === 0) runDescribe();
    if (name === 'events') renderEvents();
  }

  /**
   * select opens the details of the object id; dispatch tells the other
   * views (a click here), not when another view asked.
   */
  function select(id, dispatch) {
    const { kind, namespace: ns, name } = parseId(id);
    if (!kinds[kind]) return;
    if (namespace && ns && ns !== namespace) {
      namespace = '';
      nsSelect.value = '';
    }
    // A pod inside a collapsed group: draw its ReplicaSet's pods one by one.
    if (kind === 'Pod' && model) {
      for (const n of model.columns[2]) if (n.members && n.members.has(id)) expanded.add(n.group);
    }
    const changed = id !== selected;
    selected = id;
    details.hidden = false;
    details.dataset.object = id;
    body.classList.add('og-open');
    hint.hidden = true; // the hint is read: room for the details
    chooseLayout();
    dKind.textContent = kind;
    dName.textContent = ns ? `${ns}/${name}` : name;
    if (changed) {
      yamlRV = '';
      yamlPre.textContent = t('objects.loading');
      describePre.textContent = '';
      describeRun = 0;
      note.hidden = true;
      loadYAML();
      showTab(tab);
      countEvents();
    }
    schedule();
    highlight();
    requestAnimationFrame(() => boxes.get(id)?.el.scrollIntoView({ block: 'nearest', inline: 'nearest' }));
    if (dispatch && ctx.bus) {
      ctx.bus.dispatchEvent(new CustomEvent('select', { detail: { kind, namespace: ns, name, source: 'objects' } }));
    }
  }

  // The YAML follows the object: a new resourceVersion in the cache GETs it again.
  function refreshSelected() {
    const obj = cachedObject(selected);
    if (!yamlRV || yamlRV === 'gone') return;
    // Changed, or gone from the cache (deleted): GET it again (a 404 says so).
    if (!obj || obj.metadata.resourceVersion !== yamlRV) loadYAML();
  }

  function cachedObject(id) {
    const { kind, namespace: ns, name } = parseId(id);
    const coll = { Deployment: 'deployments', ReplicaSet: 'replicasets', Pod: 'pods', Node: 'nodes', Service: 'services', EndpointSlice: 'endpointslices' }[kind];
    const m = data[coll];
    return m ? m.get(ns ? `${ns}/${name}` : name) : null;
  }

  async function loadYAML() {
    if (yamlBusy) { yamlAgain = true; return; }
    yamlBusy = true;
    const id = selected;
    try {
      const { kind, namespace: ns, name } = parseId(id);
      const res = await ctx.cluster.fetch(objectPath(kind, ns, name), { headers: { Accept: 'application/json' } });
      const json = await res.json();
      if (id !== selected) return;
      if (res.status === 404) {
        note.textContent = t('objects.gone');
        note.hidden = false;
        yamlRV = 'gone';
        if (!yamlPre.dataset.loaded) yamlPre.textContent = json.message || '';
        return;
      }
      if (!res.ok) throw new Error(json.message || res.statusText);
      note.hidden = true;
      yamlRV = json.metadata.resourceVersion;
      const text = toYAML(json);
      if (yamlPre.textContent !== text) {
        yamlPre.textContent = text;
        yamlPre.dataset.loaded = 'true';
        yamlPre.dataset.resourceVersion = yamlRV;
      }
    } catch (err) {
      if (id === selected) yamlPre.textContent = t('objects.failed', { message: err.message });
    } finally {
      yamlBusy = false;
      if (yamlAgain) { yamlAgain = false; if (selected) setTimeout(loadYAML, 300); }
    }
  }

  // kubectl describe runs in the worker's shell; its output comes here
  // and nowhere else (the console shows nothing of it).
  async function runDescribe() {
    const run = ++describeRun;
    const line = commandFor('describe');
    describePre.textContent = t('objects.loading');
    try {
      const { code, stdout, stderr } = await ctx.cluster.capture(line);
      if (run !== describeRun) return;
      describePre.textContent = stripANSI(stdout + (stderr ? `\n${stderr}` : ''));
      describePre.dataset.code = code;
    } catch (err) {
      if (run === describeRun) describePre.textContent = t('objects.failed', { message: err.message });
    }
  }

  function eventsFor(id) {
    const { kind, namespace: ns, name } = parseId(id);
    const obj = cachedObject(id);
    const uid = obj && obj.metadata.uid;
    const out = [];
    for (const e of events.values()) {
      const io = e.involvedObject || {};
      if (io.kind !== kind || io.name !== name) continue;
      if (ns && (io.namespace || e.metadata.namespace) !== ns) continue;
      if (uid && io.uid && io.uid !== uid) continue;
      out.push(e);
    }
    return out.sort((a, b) => eventTime(a) - eventTime(b));
  }

  function countEvents() {
    const n = selected ? eventsFor(selected).length : 0;
    tabButtons.events.textContent = n ? `${t('objects.tab.events')} (${n})` : t('objects.tab.events');
  }

  function renderEvents() {
    countEvents();
    const list = eventsFor(selected);
    const now = Date.now();
    eventList.replaceChildren(...list.map((e) => {
      const li = el('li', `og-ev ${e.type === 'Warning' ? 'bad' : 'ok'}`);
      li.dataset.objectEvent = '';
      li.dataset.reason = e.reason || '';
      li.append(
        el('span', 'og-ev-type', e.type || 'Normal'),
        el('span', 'og-ev-reason', e.reason || ''),
        el('span', 'og-ev-age', lastSeen(e, now)),
        el('span', 'og-ev-msg', e.message || ''),
      );
      return li;
    }));
    noEvents.textContent = t('objects.noEvents');
    noEvents.hidden = list.length > 0;
  }

  // Beside, over or under the graph, whichever the panel has room for.
  function chooseLayout() {
    const w = body.clientWidth;
    const h = body.clientHeight;
    let mode = 'stack';
    if (window.matchMedia('(max-width: 860px)').matches) mode = 'flow';
    else if (w >= 760 || (h < 460 && w >= 600)) mode = 'side';
    else if (h < 460) mode = 'over';
    body.dataset.layout = mode;
  }

  // --- the bus -------------------------------------------------------------
  const onSelect = (ev) => {
    const d = ev.detail || {};
    if (d.source === 'objects') return;
    const kind = kindOf(d.kind);
    if (!kind || !d.name) return;
    select(`${kind}/${kinds[kind].cluster ? '' : d.namespace || 'default'}/${d.name}`, false);
  };
  if (ctx.bus) ctx.bus.addEventListener('select', onSelect);
  // An object picked before this view first opened (after mount has run).
  if (ctx.selected) { const d = ctx.selected; queueMicrotask(() => onSelect({ detail: d })); }

  // --- the data: every collection from the shared cache ----------------------
  const offs = Object.entries(collections).map(([name, path]) => ctx.cache.subscribe(path, (items) => {
    data[name] = items;
    schedule();
    if (name === 'pods' || name === 'deployments' || name === 'services') namespacesChanged();
  }));
  offs.push(ctx.cache.subscribe('/api/v1/events', (items) => {
    events = items;
    if (selected && tab === 'events') renderEvents();
    else if (selected) countEvents();
  }));

  // --- language --------------------------------------------------------------
  const offLang = onLang(() => {
    nsText.textContent = t('objects.namespace');
    hint.textContent = t('objects.hint');
    empty.textContent = t('objects.empty');
    heads.replaceChildren(...[0, 1, 2, 3].map((i) => {
      const h = el('span', 'og-head');
      h.title = t(`objects.col.${i}`);
      h.append(el('span', 'og-long', t(`objects.col.${i}`)), el('span', 'og-short', t(`objects.colShort.${i}`)));
      return h;
    }));
    dClose.title = t('objects.close');
    dClose.setAttribute('aria-label', t('objects.close'));
    for (const [k, b] of Object.entries(tabButtons)) b.textContent = t(`objects.tab.${k}`);
    cmdRun.textContent = '▶';
    cmdRun.title = t('objects.runInConsole');
    cmdRefresh.textContent = '↻';
    cmdRefresh.title = t('objects.refresh');
    nsKnown = '';
    namespacesChanged();
    if (selected) countEvents();
    schedule();
  });
  showTab('yaml');

  return {
    show() { visible = true; schedule(); },
    hide() { visible = false; },
    unmount() {
      for (const off of offs) off();
      ro.disconnect();
      if (ctx.bus) ctx.bus.removeEventListener('select', onSelect);
      if (typeof offLang === 'function') offLang();
      if (frame) cancelAnimationFrame(frame);
      if (anim) cancelAnimationFrame(anim);
    },
    select: (id) => select(id, true),
  };
}
