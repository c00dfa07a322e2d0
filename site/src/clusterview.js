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

const byName = (a, b) => Informer.key(a).localeCompare(Informer.key(b));

export class ClusterView {
  /** @param {import('./cache.js').Cache} cache  the page's shared informers */
  constructor(root, cache) {
    this.root = root;
    this.nodes = new Map();
    this.pods = new Map();
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

    const nodes = [...this.nodes.values()].sort(byName);
    const nodeBody = r.querySelector('#nodes tbody');
    nodeBody.replaceChildren(...nodes.map((n) => {
      const tr = document.createElement('tr');
      const status = nodeStatus(n);
      tr.dataset.node = n.metadata.name;
      tr.dataset.status = status;
      const count = [...this.pods.values()].filter((p) => p.spec && p.spec.nodeName === n.metadata.name).length;
      tr.append(cell(n.metadata.name, 'name'), badge(status),
        cell(String(count), 'num'),
        cell(((n.status || {}).nodeInfo || {}).kubeletVersion || '', 'dim'));
      return tr;
    }));
    r.querySelector('#nodes-empty').hidden = nodes.length > 0;
    r.querySelector('#nodes-count').textContent = String(nodes.length);

    const pods = [...this.pods.values()].sort(byName);
    const podBody = r.querySelector('#pods tbody');
    podBody.replaceChildren(...pods.map((p) => {
      const tr = document.createElement('tr');
      const status = podStatus(p);
      tr.dataset.pod = p.metadata.name;
      tr.dataset.namespace = p.metadata.namespace;
      tr.dataset.status = status;
      tr.append(cell(p.metadata.name, 'name'), cell(podReady(p), 'num'), badge(status),
        cell((p.spec || {}).nodeName || '—', 'dim'), cell((p.status || {}).podIP || '—', 'dim mono'));
      return tr;
    }));
    r.querySelector('#pods-empty').hidden = pods.length > 0;
    r.querySelector('#pods-count').textContent = String(pods.length);
  }
}
