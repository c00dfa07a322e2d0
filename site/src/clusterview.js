// The live cluster panel: nodes and pods as tables, kept current by the
// page's shared informers (list + watch through the bridge; see cache.js).

import { Informer } from './informer.js';
import { t, onLang } from './i18n.js';

/** The STATUS column of `kubectl get pods`, simplified. */
export function podStatus(pod) {
  const st = pod.status || {};
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  let reason = st.reason || st.phase || 'Pending';
  for (const cs of st.containerStatuses || []) {
    const s = cs.state || {};
    if (s.waiting && s.waiting.reason) reason = s.waiting.reason;
    else if (s.terminated && s.terminated.reason) reason = s.terminated.reason;
  }
  return reason;
}

/** The READY column: ready containers / all containers. */
export function podReady(pod) {
  const total = ((pod.spec || {}).containers || []).length;
  const ready = ((pod.status || {}).containerStatuses || []).filter((c) => c.ready).length;
  return `${ready}/${total}`;
}

/** The STATUS column of `kubectl get nodes`. */
export function nodeStatus(node) {
  const ready = ((node.status || {}).conditions || []).find((c) => c.type === 'Ready');
  let s = ready && ready.status === 'True' ? 'Ready' : 'NotReady';
  if (node.spec && node.spec.unschedulable) s += ',SchedulingDisabled';
  return s;
}

function statusClass(s) {
  if (s === 'Running' || s === 'Ready' || s === 'Succeeded' || s === 'Completed') return 'ok';
  if (s === 'Pending' || s === 'ContainerCreating' || s === 'Terminating' || s.includes('SchedulingDisabled')) return 'wait';
  return 'bad';
}

function cell(text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function badge(text) {
  const td = document.createElement('td');
  const span = document.createElement('span');
  span.className = `badge ${statusClass(text)}`;
  span.textContent = text;
  td.append(span);
  return td;
}

// Keys are namespace/name in ASCII: a plain comparison sorts them as
// kubectl does, without localeCompare's collator (slow to start, and slow).
const byName = (a, b) => {
  const x = Informer.key(a);
  const y = Informer.key(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Keyed table rows: each object keeps its <tr>; a row whose cells did not
 * change is left alone, a changed one gets new cells, and rows move only
 * when out of place. Rebuilding 200 rows at every watch event made the
 * browser restyle and relayout the whole table each frame.
 */
class Rows {
  constructor(tbody) {
    this.tbody = tbody;
    this.rows = new Map(); // key -> {tr, sig}
  }

  /**
   * @param {object[]} items   in display order
   * @param {(o: object) => string} keyOf
   * @param {(o: object) => {data: object, cells: () => HTMLElement[], sig: string}} describe
   */
  sync(items, keyOf, describe) {
    const want = [];
    const seen = new Set();
    for (const it of items) {
      const k = keyOf(it);
      seen.add(k);
      let row = this.rows.get(k);
      if (!row) {
        row = { tr: document.createElement('tr'), sig: null };
        this.rows.set(k, row);
      }
      const d = describe(it);
      if (d.sig !== row.sig) {
        row.sig = d.sig;
        for (const [name, value] of Object.entries(d.data)) row.tr.dataset[name] = value;
        row.tr.replaceChildren(...d.cells());
      }
      want.push(row.tr);
    }
    for (const [k, row] of this.rows) {
      if (!seen.has(k)) {
        row.tr.remove();
        this.rows.delete(k);
      }
    }
    let cursor = this.tbody.firstElementChild;
    for (const tr of want) {
      if (tr === cursor) {
        cursor = cursor.nextElementSibling;
        continue;
      }
      this.tbody.insertBefore(tr, cursor);
    }
  }
}

export class ClusterView {
  /** @param {import('./cache.js').Cache} cache  the page's shared informers */
  constructor(root, cache) {
    this.root = root;
    this.nodes = new Map();
    this.pods = new Map();
    this.states = { nodes: 'connecting', pods: 'connecting' };
    this.nodeRows = new Rows(root.querySelector('#nodes tbody'));
    this.podRows = new Rows(root.querySelector('#pods tbody'));
    this.frame = 0;
    // The cache tells each subscriber at most once per frame; nodes and
    // pods together still draw once.
    const schedule = () => {
      if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.render(); });
    };
    cache.subscribe('/api/v1/nodes', (items, state) => {
      this.nodes = items;
      this.states.nodes = state;
      schedule();
    });
    cache.subscribe('/api/v1/pods', (items, state) => {
      this.pods = items;
      this.states.pods = state;
      schedule();
    });
    onLang(() => this.render());
  }

  render() {
    const r = this.root;
    // A hidden tab draws nothing (a 100-replica scale is hundreds of
    // updates); it draws once when it is shown again (main.js).
    if (r.hidden) return;
    const state = this.states.nodes === 'live' && this.states.pods === 'live' ? 'live'
      : (this.states.nodes === 'reconnecting' || this.states.pods === 'reconnecting') ? 'reconnecting' : 'connecting';
    const live = r.querySelector('.live-state');
    live.dataset.state = state;
    live.textContent = t(`cluster.${state}`);

    const perNode = new Map();
    for (const p of this.pods.values()) {
      const n = p.spec && p.spec.nodeName;
      if (n) perNode.set(n, (perNode.get(n) || 0) + 1);
    }
    const nodes = [...this.nodes.values()].sort(byName);
    this.nodeRows.sync(nodes, Informer.key, (n) => {
      const name = n.metadata.name;
      const status = nodeStatus(n);
      const count = String(perNode.get(name) || 0);
      const version = ((n.status || {}).nodeInfo || {}).kubeletVersion || '';
      return {
        sig: [name, status, count, version].join('\0'),
        data: { node: name, status },
        cells: () => [cell(name, 'name'), badge(status), cell(count, 'num'), cell(version, 'dim')],
      };
    });
    r.querySelector('#nodes-empty').hidden = nodes.length > 0;
    r.querySelector('#nodes-count').textContent = String(nodes.length);

    const pods = [...this.pods.values()].sort(byName);
    this.podRows.sync(pods, Informer.key, (p) => {
      const status = podStatus(p);
      const ready = podReady(p);
      const node = (p.spec || {}).nodeName || '—';
      const ip = (p.status || {}).podIP || '—';
      // Every namespace's pods are listed (kubectl get pods -A); one
      // outside default is named with its namespace, as ns/name.
      const ns = p.metadata.namespace;
      const name = ns && ns !== 'default' ? `${ns}/${p.metadata.name}` : p.metadata.name;
      return {
        sig: [name, ready, status, node, ip].join('\0'),
        data: { pod: p.metadata.name, namespace: ns, status },
        cells: () => [cell(name, 'name'), cell(ready, 'num'), badge(status), cell(node, 'dim'), cell(ip, 'dim mono')],
      };
    });
    r.querySelector('#pods-empty').hidden = pods.length > 0;
    r.querySelector('#pods-count').textContent = String(pods.length);
  }
}
