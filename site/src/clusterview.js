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

// One collator: the order of localeCompare, without building one per call
// (a 1,000-pod sort is some 10,000 comparisons, once per frame).
const collator = new Intl.Collator();
const byName = (a, b) => collator.compare(Informer.key(a), Informer.key(b));

// syncRows makes tbody's rows exactly rows, in order, moving only what
// changed: a frame in which 3 of 1,000 pods changed touches 3 rows, where
// rebuilding the table re-created all 1,000 (the main thread's longest task
// while a big Deployment started).
function syncRows(tbody, rows) {
  const keep = new Set(rows);
  for (const tr of [...tbody.children]) if (!keep.has(tr)) tr.remove();
  let next = tbody.firstChild;
  for (const tr of rows) {
    if (tr === next) next = next.nextSibling;
    else tbody.insertBefore(tr, next);
  }
}

export class ClusterView {
  /** @param {import('./cache.js').Cache} cache  the page's shared informers */
  constructor(root, cache) {
    this.root = root;
    this.nodes = new Map();
    this.pods = new Map();
    this.podRows = new Map(); // namespace/name → {tr, sig}: the rows drawn
    this.states = { nodes: 'connecting', pods: 'connecting' };
    // The cache tells subscribers at most once per frame.
    cache.subscribe('/api/v1/nodes', (items, state) => {
      this.nodes = items;
      this.states.nodes = state;
      this.render();
    });
    cache.subscribe('/api/v1/pods', (items, state) => {
      this.pods = items;
      this.states.pods = state;
      this.render();
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

    const perNode = new Map(); // node name → pods bound to it
    for (const p of this.pods.values()) {
      const name = p.spec && p.spec.nodeName;
      if (name) perNode.set(name, (perNode.get(name) || 0) + 1);
    }
    const nodes = [...this.nodes.values()].sort(byName);
    const nodeBody = r.querySelector('#nodes tbody');
    nodeBody.replaceChildren(...nodes.map((n) => {
      const tr = document.createElement('tr');
      const status = nodeStatus(n);
      tr.dataset.node = n.metadata.name;
      tr.dataset.status = status;
      tr.append(cell(n.metadata.name, 'name'), badge(status),
        cell(String(perNode.get(n.metadata.name) || 0), 'num'),
        cell(((n.status || {}).nodeInfo || {}).kubeletVersion || '', 'dim'));
      return tr;
    }));
    r.querySelector('#nodes-empty').hidden = nodes.length > 0;
    r.querySelector('#nodes-count').textContent = String(nodes.length);

    // A pod's row is made again only when one of its cells would change.
    const pods = [...this.pods.values()].sort(byName);
    const podBody = r.querySelector('#pods tbody');
    const rows = new Map(); // namespace/name → {tr, sig}
    syncRows(podBody, pods.map((p) => {
      const key = Informer.key(p);
      const status = podStatus(p);
      const ready = podReady(p);
      const node = (p.spec || {}).nodeName || '—';
      const ip = (p.status || {}).podIP || '—';
      const sig = `${status}\0${ready}\0${node}\0${ip}`;
      let row = this.podRows.get(key);
      if (!row || row.sig !== sig) {
        const tr = document.createElement('tr');
        tr.dataset.pod = p.metadata.name;
        tr.dataset.namespace = p.metadata.namespace;
        tr.dataset.status = status;
        tr.append(cell(p.metadata.name, 'name'), cell(ready, 'num'), badge(status),
          cell(node, 'dim'), cell(ip, 'dim mono'));
        row = { tr, sig };
      }
      rows.set(key, row);
      return row.tr;
    }));
    this.podRows = rows;
    r.querySelector('#pods-empty').hidden = pods.length > 0;
    r.querySelector('#pods-count').textContent = String(pods.length);
  }
}
