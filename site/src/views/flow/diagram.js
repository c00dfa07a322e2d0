// The flow view's picture: the seeds' diagram (SEEDS.md, article 2) laid out
// by hand in SVG, with the hops drawn on it.
//
//   ┌ kube-controller-manager ─────────────┐ ┌ kube-scheduler ┐
//   │ [deployment] [replicaset]            │ └────────────────┘
//   │ [gc] [endpointslice] [node] ...      │
//   └────────────────┬─────────────────────┘
//   [kubectl] ─▶ [ kube-apiserver ] ◀─▶ [ etcd ]
//        ┌──────────────┼──────────────┐
//   ┌ node-1 ───┐  ┌ node-2 ───┐  ┌ node-3 ───┐
//   │ kubelet   │  │ kubelet   │  │ kubelet   │   each with kube-proxy,
//   │ CNI  CRI  │  │ CNI  CRI  │  │ CNI  CRI  │   CNI, CRI and the pods
//   │ pods      │  │ pods      │  │ pods      │   wazero runs
//
// Every arrow between two boxes is one line per kind of hop, drawn thin with
// the number of hops it carried so far: hundreds of hops stay a few dozen
// lines. The last few hops are drawn over them, thick, numbered and
// coloured by kind, the newest one with a dot travelling along it.
//
// Hooks for tests: boxes [data-component=NAME] (kubelet and kube-proxy also
// carry data-node), drawn hops [data-hop=SEQ] with data-from and data-to.

import { boxOf, nodeOf, kindOf, arrowLabel, edgeKey } from './hops.js';

const NS = 'http://www.w3.org/2000/svg';
const W = 360;
// The gap between two columns of nodes (layout).
const gap = 12;

function el(name, attrs = {}, parent = null) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.append(e);
  return e;
}

// The pods listed on a node: the first few by name, then "+N".
const PODS_SHOWN = 4;

const KINDS = ['request', 'response', 'write', 'watch', 'decision', 'cni', 'cri', 'pending'];

const label = (name) => name.replace(/^generic-/, '').replace(/-(controller|publisher)$/, '');

/** The diagram: call update(...) to redraw, at most once per frame. */
export class Diagram {
  constructor(root, { onPick } = {}) {
    this.svg = el('svg', { class: 'flow-svg', viewBox: `0 0 ${W} 390`, role: 'img' });
    root.append(this.svg);
    this.root = root;
    this.onPick = onPick || (() => {});
    const defs = el('defs', {}, this.svg);
    for (const k of KINDS) {
      const m = el('marker', { id: `flow-arrow-${k}`, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto-start-reverse' }, defs);
      el('path', { d: 'M0,0 L10,5 L0,10 z', class: `fill-${k}` }, m);
    }
    this.boxLayer = el('g', { class: 'boxes' }, this.svg);
    this.edgeLayer = el('g', { class: 'edges' }, this.svg);
    this.trailLayer = el('g', { class: 'trail' }, this.svg);
    this.pendingLayer = el('g', { class: 'pending' }, this.svg);
    this.boxes = new Map(); // box id → {x, y, w, h, port: {x, y}, g}
    this.nodes = [];
    this.controllers = ['deployment-controller', 'replicaset-controller'];
    this.edgeEls = new Map(); // edge key → {g, text, seq, from, to, count}
    this.trailEls = new Map(); // seq → the trail's drawn hop
    this.active = new Set(); // the boxes the trail lights
    this.gen = 0;
    this.pods = new Map(); // node → the first few [{name, phase}], .total
    this.layout([]);
    this.svg.addEventListener('click', (ev) => {
      const hop = ev.target.closest('[data-hop]');
      if (hop) this.onPick(Number(hop.dataset.hop));
    });
  }

  /** The words on the diagram that are not component names ({you}). */
  relabel({ you }) {
    this.you = you;
    if (this.youText) this.youText.textContent = you;
  }

  /** Lay the boxes out for these nodes (names); keeps the controllers seen. */
  layout(nodes) {
    this.nodes = nodes.length ? nodes : ['node-1', 'node-2', 'node-3'];
    this.boxLayer.replaceChildren();
    this.boxes.clear();
    this.edgeLayer.replaceChildren();
    this.edgeEls.clear();
    this.trailLayer.replaceChildren();
    this.trailEls.clear();
    this.active.clear();

    // kube-controller-manager with its controllers inside.
    const cm = this.box('kube-controller-manager', 8, 6, 254, 122, { title: 'kube-controller-manager', cls: 'group' });
    cm.port = { x: 135, y: 128 };
    const inner = (name, x, y, w, h, small) => {
      const b = this.box(`ctrl:${name}`, x, y, w, h, { title: label(name), component: name, cls: small ? 'chip' : 'ctrl', parent: cm.g });
      b.port = { x: x + w / 2, y: 128 };
      return b;
    };
    inner('deployment-controller', 16, 28, 118, 24);
    inner('replicaset-controller', 138, 28, 116, 24);
    this.chipSlots = [];
    for (let r = 0; r < 4; r++) for (let c = 0; c < 3; c++) this.chipSlots.push([16 + c * 80, 58 + r * 17.5]);
    this.chipOf = new Map();
    for (const name of this.controllers.slice(2)) this.addChip(name);

    const sched = this.box('kube-scheduler', 270, 6, 82, 50, { title: 'kube-scheduler', component: 'kube-scheduler', sub: 'filter · score · bind', cls: 'narrow' });
    sched.port = { x: 300, y: 56 };

    const kubectl = this.box('kubectl', 8, 144, 70, 34, { title: 'kubectl', component: 'kubectl', sub: this.you || '' });
    kubectl.port = { x: 78, y: 161 };
    this.youText = kubectl.g.querySelector('.sub');
    const others = this.box('clients', 8, 184, 70, 20, { title: '', component: 'clients', cls: 'chip' });
    others.port = { x: 78, y: 194 };
    this.othersNames = new Set();
    others.g.style.display = 'none';

    const api = this.box('kube-apiserver', 106, 150, 120, 44, { title: 'kube-apiserver', component: 'kube-apiserver', cls: 'hub' });
    api.port = { x: 166, y: 172 };
    const etcd = this.box('etcd', 262, 150, 90, 44, { title: 'etcd', component: 'etcd', sub: '/registry/…', cls: 'store' });
    etcd.port = { x: 262, y: 172 };

    // The nodes, three to a row, with a channel right of the last column
    // and between the columns: arrows to the nodes of the second row and
    // below run down those channels, never across a node of the row above.
    const nw = 106;
    const nh = 160;
    let y0 = 218;
    this.nodes.forEach((node, i) => {
      const col = i % 3;
      const row = Math.floor(i / 3);
      const x = 8 + col * (nw + gap);
      const y = y0 + row * (nh + 12);
      const nb = this.box(`node:${node}`, x, y, nw, nh, { title: node, cls: 'node', node });
      nb.port = { x: x + nw / 2, y };
      nb.row = row;
      nb.col = col;
      nb.nodeBox = nb;
      const kl = this.box(`kubelet@${node}`, x + 6, y + 22, nw - 12, 22, { title: 'kubelet', component: 'kubelet', node, parent: nb.g, cls: 'ctrl' });
      kl.port = { x: x + nw / 2 - 16, y };
      kl.low = { x: x + nw / 2, y: y + 44 };
      const kp = this.box(`kube-proxy@${node}`, x + nw - 56, y + 4, 50, 15, { title: 'kube-proxy', component: 'kube-proxy', node, parent: nb.g, cls: 'chip' });
      kp.port = { x: x + nw - 31, y };
      const cni = this.box(`cni@${node}`, x + 6, y + 60, nw / 2 - 9, 18, { title: 'CNI', component: 'cni', node, parent: nb.g, cls: 'chip cni' });
      cni.port = { x: x + 6 + (nw / 2 - 9) / 2, y: y + 60 };
      const cri = this.box(`cri@${node}`, x + nw / 2 + 3, y + 60, nw / 2 - 9, 18, { title: 'CRI', component: 'cri', node, parent: nb.g, cls: 'chip cri' });
      cri.port = { x: x + nw / 2 + 3 + (nw / 2 - 9) / 2, y: y + 60 };
      for (const inner of [kl, kp, cni, cri]) inner.nodeBox = nb;
      const rt = el('text', { x: x + 8, y: y + 92, class: 'runtime' }, nb.g);
      rt.textContent = 'wazero · WASI';
      nb.podsG = el('g', { class: 'pods' }, nb.g);
    });
    const rows = Math.ceil(this.nodes.length / 3);
    this.height = y0 + rows * (nh + 12) - 4;
    this.nodesTop = y0;
    this.svg.setAttribute('viewBox', `0 0 ${W} ${this.height}`);
    this.root.style.aspectRatio = `${W} / ${this.height}`; // flow.css: the box is contained
    this.drawPods();
  }

  box(id, x, y, w, h, { title, sub, component, node, cls = '', parent = null }) {
    const g = el('g', { class: `box ${cls}` }, parent || this.boxLayer);
    if (component) g.dataset.component = component;
    if (node) g.dataset.node = node;
    el('rect', { x, y, width: w, height: h, rx: cls.includes('chip') ? 4 : 7 }, g);
    const big = h >= 30 && !cls.includes('ctrl');
    const text = el('text', { x: x + (big ? 8 : w / 2), y: y + (big ? 15 : h / 2 + 3.5), class: big ? 'title' : 'title mid' }, g);
    text.textContent = title;
    if (sub !== undefined) {
      const s = el('text', { x: x + 8, y: y + Math.min(30, h - 6), class: 'sub' }, g);
      s.textContent = sub;
    }
    const tip = el('title', {}, g);
    tip.textContent = component || title;
    const b = { x, y, w, h, g, text, port: { x: x + w / 2, y: y + h / 2 } };
    this.boxes.set(id, b);
    return b;
  }

  addChip(name) {
    if (this.chipOf.has(name)) return this.chipOf.get(name);
    const i = this.chipOf.size;
    let b;
    if (i < this.chipSlots.length - 1) {
      const [x, y] = this.chipSlots[i];
      const cm = this.boxes.get('kube-controller-manager');
      b = this.box(`ctrl:${name}`, x, y, 76, 15, { title: label(name), component: name, cls: 'chip', parent: cm.g });
      b.port = { x: x + 38, y: 128 };
    } else {
      // The last slot stands for every controller beyond the others.
      b = this.boxes.get('ctrl:+more');
      if (!b) {
        const [x, y] = this.chipSlots[this.chipSlots.length - 1];
        const cm = this.boxes.get('kube-controller-manager');
        b = this.box('ctrl:+more', x, y, 76, 15, { title: '+', component: 'more-controllers', cls: 'chip', parent: cm.g });
        b.port = { x: x + 38, y: 128 };
        b.names = [];
      }
      b.names.push(name);
      b.text.textContent = `+${b.names.length}`;
    }
    this.chipOf.set(name, b);
    if (!this.controllers.includes(name)) this.controllers.push(name);
    return b;
  }

  /** The box a hop end is drawn at, creating a controller's chip on first sight. */
  boxFor(id) {
    if (this.boxes.has(id)) return this.boxes.get(id);
    if (id.startsWith('ctrl:')) return this.addChip(id.slice(5));
    if (id.startsWith('client:')) {
      const b = this.boxes.get('clients');
      this.othersNames.add(id.slice(7));
      b.g.style.display = '';
      b.text.textContent = [...this.othersNames].join(', ');
      b.g.querySelector('title').textContent = [...this.othersNames].join(', ');
      return b;
    }
    if (id.startsWith('node:')) return this.boxes.get(id) || null;
    const m = /@(.+)$/.exec(id);
    if (m && !this.nodes.includes(m[1])) return null; // a node not in the layout yet
    return null;
  }

  /** The two points a hop's arrow runs between, or null when a box is missing. */
  ends(h) {
    if (h.type === 'decision') {
      // Down the right margin and along the gap above the nodes, so the
      // scheduler's choice does not cross etcd and the API server.
      const s = this.boxes.get('kube-scheduler');
      const n = this.boxes.get(`node:${nodeOf(h)}`);
      if (!s || !n) return null;
      const x = n.x + n.w - 14;
      const y = n.y - 8;
      // W - 3 is right of the last column: clear of the nodes above.
      return [{ x: s.x + s.w, y: s.y + 36 }, { x: W - 3, y: s.y + 36 }, { x: W - 3, y }, { x, y }, { x, y: n.y }];
    }
    const a = this.boxFor(boxOf(h.from, h.to));
    const b = this.boxFor(boxOf(h.to, h.from));
    if (!a || !b) return null;
    if (h.type === 'call') return [a.low || a.port, b.port];
    const api = this.boxes.get('kube-apiserver');
    // Anything to or from the API server meets it on the side facing the peer.
    const side = (peer) => {
      const p = peer.port;
      if (peer === this.boxes.get('etcd')) return { x: api.x + api.w, y: api.y + api.h / 2 };
      if (p.y <= api.y) return { x: clamp(p.x, api.x + 10, api.x + api.w - 10), y: api.y };
      if (p.y >= api.y + api.h) return { x: clamp(p.x, api.x + 10, api.x + api.w - 10), y: api.y + api.h };
      return { x: api.x, y: clamp(p.y, api.y + 8, api.y + api.h - 8) };
    };
    let pts = [a.port, b.port];
    if (a === api) pts = [side(b), b.port];
    else if (b === api) pts = [a.port, side(a)];
    // A node below the first row: around the nodes above, not across them.
    const na = a.nodeBox;
    const nb = b.nodeBox;
    if (na !== nb && ((na && na.row > 0) || (nb && nb.row > 0))) {
      const toNode = nb && nb.row > 0;
      const node = toNode ? nb : na;
      const [far, near] = toNode ? pts : [pts[1], pts[0]];
      const off = offsetOf(h);
      const top = this.nodesTop - 6 + off; // the gap above the first row
      const channel = node.col === 0 ? 3 + off : node.x - gap / 2 + off;
      const above = node.y - 6 + off; // the gap above the node's row
      const route = [far, { x: far.x + off, y: top }, { x: channel, y: top }, { x: channel, y: above }, { x: near.x + off, y: above }, { x: near.x + off, y: near.y }];
      return toNode ? route : route.reverse();
    }
    return pts;
  }

  /** The pods on each node, from the shared cache (a Map of pods). */
  setPods(pods) {
    const by = new Map();
    for (const p of pods.values()) {
      const node = p.spec && p.spec.nodeName;
      if (!node) continue;
      if (!by.has(node)) by.set(node, []);
      by.get(node).push(p);
    }
    const named = (a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0); // ASCII names
    for (const [node, list] of by) {
      list.sort(named);
      by.set(node, list.slice(0, PODS_SHOWN).map((p) => ({
        name: p.metadata.name, phase: (p.status && p.status.phase) || 'Pending', deleting: !!p.metadata.deletionTimestamp,
      })));
      by.get(node).total = list.length;
    }
    this.pods = by;
    this.drawPods();
  }

  // Each node's few pods, redrawn only when what it shows changed: while 200
  // pods start, the cache changes every frame, the lines on a node seldom.
  drawPods() {
    for (const node of this.nodes) {
      const nb = this.boxes.get(`node:${node}`);
      if (!nb) continue;
      const list = this.pods.get(node) || [];
      const total = list.total || list.length;
      const shown = list.slice(0, total > PODS_SHOWN ? PODS_SHOWN - 1 : PODS_SHOWN);
      const sig = `${total}|${shown.map((p) => `${p.name} ${p.phase} ${p.deleting}`).join('|')}`;
      if (nb.podsSig === sig) continue;
      nb.podsSig = sig;
      const g = nb.podsG;
      const frag = document.createDocumentFragment();
      shown.forEach((p, i) => {
        const y = nb.y + 104 + i * 12.5;
        el('circle', { cx: nb.x + 12, cy: y - 3, r: 3, class: `pod-dot ${p.deleting ? 'Terminating' : p.phase}` }, frag);
        const t = el('text', { x: nb.x + 19, y, class: 'pod' }, frag);
        t.textContent = p.name.length > 18 ? `${p.name.slice(0, 8)}…${p.name.slice(-8)}` : p.name;
        el('title', {}, t).textContent = `${p.name} (${p.phase})`;
      });
      if (total > PODS_SHOWN) {
        const t = el('text', { x: nb.x + 19, y: nb.y + 104 + (PODS_SHOWN - 1) * 12.5, class: 'pod more' }, frag);
        t.textContent = `+${total - PODS_SHOWN + 1}`;
      }
      g.replaceChildren(frag);
    }
  }

  /**
   * Draw the counts per arrow (edges: aggregate()'s Map), the trail (the last
   * hops, newest last), and animate the newest when animate is a duration.
   * Called at most once a frame with every hop that arrived in it; it writes
   * only what changed since the last call (an arrow's path once, its count
   * and last hop when they move; the trail's hops as they enter and leave).
   */
  update(edges, trail, animate) {
    // Arrows with their counts: reuse the elements, drop the ones gone. An
    // arrow's geometry is fixed by its key (boxes and kind) and the layout.
    const gen = ++this.gen;
    for (const e of edges.values()) {
      let x = this.edgeEls.get(e.key);
      if (!x) {
        const pts = this.ends(e.last);
        if (!pts) continue;
        const kind = kindOf(e.last);
        const d = line(pts, offsetOf(e.last));
        const g = el('g', { class: `edge k-${kind}` }, this.edgeLayer);
        el('path', { d: d.path, 'marker-end': `url(#flow-arrow-${kind})` }, g);
        const at = d.at(0.62);
        const text = el('text', { class: 'count', x: at.x, y: at.y }, g);
        text.append(document.createTextNode(''));
        x = { g, text, seq: 0, from: null, to: null, count: 0, gen };
        this.edgeEls.set(e.key, x);
      }
      x.gen = gen;
      const h = e.last;
      if (x.seq !== h.seq) {
        x.seq = h.seq;
        x.g.dataset.hop = h.seq;
        if (x.from !== h.from) x.g.dataset.from = x.from = h.from;
        if (x.to !== h.to) x.g.dataset.to = x.to = h.to;
      }
      if (x.count !== e.count) {
        const before = x.count;
        x.count = e.count;
        x.g.dataset.count = e.count;
        if (e.count > 1 || before > 1) x.text.firstChild.data = e.count > 1 ? String(e.count) : '';
      }
    }
    for (const [k, x] of this.edgeEls) {
      if (x.gen !== gen) {
        x.g.remove();
        this.edgeEls.delete(k);
      }
    }

    // The trail: the newest hops, thick and numbered, kept by seq while
    // they stay in it.
    const want = new Set(trail.map((h) => h.seq));
    for (const [seq, x] of this.trailEls) {
      if (!want.has(seq)) {
        x.g.remove();
        this.trailEls.delete(seq);
      }
    }
    const active = new Set();
    let prev = null;
    trail.forEach((h, i) => {
      let x = this.trailEls.get(h.seq);
      if (!x) {
        const pts = this.ends(h);
        if (!pts) return;
        const kind = kindOf(h);
        const g = el('g', { class: `hop k-${kind}`, 'data-hop': h.seq, 'data-from': h.from, 'data-to': h.to, 'data-kind': kind });
        if (h.type === 'decision') g.dataset.node = nodeOf(h);
        const d = line(pts, offsetOf(h));
        el('path', { d: d.path, 'marker-end': `url(#flow-arrow-${kind})` }, g);
        const mid = d.at(0.5);
        el('circle', { cx: mid.x, cy: mid.y, r: 7, class: 'num' }, g);
        const num = el('text', { x: mid.x, y: mid.y + 3, class: 'num' }, g);
        num.textContent = String(h.n);
        x = { g, d, mid, num, n: h.n, newest: false, opacity: '', label: null, dot: null };
        this.trailEls.set(h.seq, x);
      }
      // In order, newest last (drawn on top); a replay can bring older ones.
      const spot = prev ? prev.g.nextSibling : this.trailLayer.firstChild;
      if (spot !== x.g) this.trailLayer.insertBefore(x.g, spot);
      prev = x;
      if (x.n !== h.n) {
        x.n = h.n;
        x.num.textContent = String(h.n);
      }
      const opacity = String(0.35 + (0.65 * (i + 1)) / trail.length);
      if (x.opacity !== opacity) x.g.style.opacity = x.opacity = opacity;
      const newest = i === trail.length - 1;
      if (newest !== x.newest) {
        x.newest = newest;
        x.g.classList.toggle('newest', newest);
        if (newest) {
          const { mid } = x;
          const right = mid.x > W - 100; // near the right edge: the label goes left of the line
          let at = { x: right ? mid.x - 10 : mid.x + 10, y: mid.y - 6, cls: right ? 'label end' : 'label' };
          // The etcd write's line is short and between two boxes: label it above them.
          if (h.type === 'write') at = { x: mid.x, y: this.boxes.get('etcd').y - 5, cls: 'label mid' };
          x.label = el('text', { x: at.x, y: at.y, class: at.cls }, x.g);
          x.label.textContent = arrowLabel(h);
        } else {
          if (x.label) x.label.remove();
          if (x.dot) x.dot.remove();
          x.label = null;
          x.dot = null;
        }
      }
      const a = this.boxFor(boxOf(h.from, h.to));
      const b = h.type === 'decision' ? this.boxes.get(`node:${nodeOf(h)}`) : this.boxFor(boxOf(h.to, h.from));
      if (a) active.add(a);
      if (b) active.add(b);
      // One animation a frame at most: the newest hop's dot.
      if (newest && animate) {
        if (x.dot) x.dot.remove();
        const dot = el('circle', { r: 3.5, class: 'dot' }, x.g);
        const frames = [0, 0.2, 0.4, 0.6, 0.8, 1].map((k) => {
          const p = x.d.at(k);
          return { transform: `translate(${p.x}px, ${p.y}px)` };
        });
        dot.animate(frames, { duration: animate, easing: 'ease-in-out', fill: 'forwards' });
        x.dot = dot;
      }
    });
    for (const b of this.active) if (!active.has(b)) b.g.classList.remove('active');
    for (const b of active) if (!this.active.has(b)) b.g.classList.add('active');
    this.active = active;
  }

  /** Step mode's held writes: their components glow, a dashed arrow waits at the API server. */
  setPending(pending) {
    this.pendingLayer.replaceChildren();
    for (const g of this.svg.querySelectorAll('.box.pending')) g.classList.remove('pending');
    pending.forEach((p, i) => {
      const h = { type: 'request', from: p.component, to: 'kube-apiserver', verb: p.verb, res: (p.object || {}).resource || '' };
      const id = boxOf(h.from, h.to);
      const b = this.boxFor(id);
      if (b) b.g.classList.add('pending');
      if (i > 0) return; // the next one to go gets the arrow
      const pts = this.ends(h);
      if (!pts) return;
      const d = line(pts, 0);
      const g = el('g', { class: 'hop k-pending', 'data-pending-from': p.component }, this.pendingLayer);
      el('path', { d: d.path, 'marker-end': 'url(#flow-arrow-pending)' }, g);
      const mid = d.at(0.5);
      const left = mid.x < W / 2;
      const t = el('text', { x: left ? mid.x + 8 : mid.x - 8, y: mid.y + 10, class: left ? 'label' : 'label end' }, g);
      t.textContent = `‖ ${arrowLabel(h)}`;
    });
  }
}

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

// Requests go up one side of a line, answers and watch events come back
// down the other, so both directions stay visible.
function offsetOf(h) {
  if (h.type === 'request') return -2.5;
  if (h.type === 'response' || h.type === 'watch') return 2.5;
  return 0;
}

function line(pts, off) {
  if (pts.length > 2) return polyline(pts);
  const [a, b] = pts;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const len = Math.hypot(dx, dy) || 1;
  const nx = (-dy / len) * off;
  const ny = (dx / len) * off;
  // Stop the arrow a little short of the box so its head shows.
  const trim = Math.min(3, len / 4);
  const p = { x: a.x + nx + (dx / len) * trim, y: a.y + ny + (dy / len) * trim };
  const q = { x: b.x + nx - (dx / len) * trim, y: b.y + ny - (dy / len) * trim };
  const f = (v) => Math.round(v * 10) / 10;
  return {
    path: `M${f(p.x)},${f(p.y)} L${f(q.x)},${f(q.y)}`,
    at: (t) => ({ x: f(p.x + (q.x - p.x) * t), y: f(p.y + (q.y - p.y) * t) }),
  };
}

// A path through several points (no offset), its at(t) by length.
function polyline(pts) {
  const f = (v) => Math.round(v * 10) / 10;
  const lens = [];
  let total = 0;
  for (let i = 1; i < pts.length; i++) {
    const l = Math.hypot(pts[i].x - pts[i - 1].x, pts[i].y - pts[i - 1].y);
    lens.push(l);
    total += l;
  }
  return {
    path: `M${pts.map((p) => `${f(p.x)},${f(p.y)}`).join(' L')}`,
    at: (t) => {
      let d = t * total;
      for (let i = 0; i < lens.length; i++) {
        if (d <= lens[i] || i === lens.length - 1) {
          const k = lens[i] ? Math.min(1, d / lens[i]) : 0;
          return { x: f(pts[i].x + (pts[i + 1].x - pts[i].x) * k), y: f(pts[i].y + (pts[i + 1].y - pts[i].y) * k) };
        }
        d -= lens[i];
      }
      return pts[pts.length - 1];
    },
  };
}

export { edgeKey };
