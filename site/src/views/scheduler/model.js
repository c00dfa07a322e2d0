// What the Scheduler view draws, computed from the API's objects and kept
// apart from the DOM so it can be tested in node:
//
//   queueGroups   schedulingqueues/default-scheduler + the pods → the pods
//                 waiting, by queue, with why, and the pods placed lately
//   filterRows    one attempt of schedulingdecisions/POD → a grid of nodes ×
//                 filter plugins: which passed, which said no and why (with
//                 the numbers), which never ran on that node
//   scoreRows     the same attempt → each feasible node's score per plugin:
//                 raw, normalized (0-100) and weighted, the total, the winner
//
// How the record reads (core/scheduler/apis/v1alpha1): filters run in
// filterPlugins order and stop at the first that rejects a node, so a node
// of a rejected group passed every plugin before that one and was not
// looked at by the ones after it.

// node-2 before node-10; one collator (localeCompare with options makes one per call).
const numeric = new Intl.Collator('en', { numeric: true });

export const QUEUES = ['inFlightPods', 'activeQ', 'backoffQ', 'unschedulablePods'];

const podKey = (p) => `${p.metadata.namespace}/${p.metadata.name}`;

/** The PodScheduled condition of a pod, or undefined. */
export function scheduledCondition(pod) {
  return ((pod.status || {}).conditions || []).find((c) => c.type === 'PodScheduled');
}

/**
 * queueGroups(queue, pods) returns {groups: {queueName: rows}, other, placed}:
 * the queue's pods by queue (in the queue's own order), pods waiting
 * without a node that the queue does not hold (another scheduler's, or
 * not seen yet), and the latest `recent` pods with a node, newest first.
 */
export function queueGroups(queue, pods, recent = 8) {
  const groups = Object.fromEntries(QUEUES.map((q) => [q, []]));
  const inQueue = new Set();
  for (const q of (queue && queue.pods) || []) {
    const key = `${q.namespace}/${q.name}`;
    inQueue.add(key);
    const pod = pods.get(key);
    const cond = pod && scheduledCondition(pod);
    (groups[q.queue] || (groups[q.queue] = [])).push({
      key, namespace: q.namespace, name: q.name, queue: q.queue, attempts: q.attempts,
      backoffExpiration: q.backoffExpiration || '', plugins: q.unschedulablePlugins || [],
      message: q.message || (cond && cond.message) || '', result: q.lastResult || '',
    });
  }
  const other = [];
  const placed = [];
  for (const pod of pods.values()) {
    const key = podKey(pod);
    if (pod.spec && pod.spec.nodeName) {
      const cond = scheduledCondition(pod);
      placed.push({ key, namespace: pod.metadata.namespace, name: pod.metadata.name, node: pod.spec.nodeName,
        at: (cond && cond.lastTransitionTime) || pod.metadata.creationTimestamp || '' });
    } else if (!inQueue.has(key) && !pod.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes((pod.status || {}).phase)) {
      const cond = scheduledCondition(pod);
      other.push({ key, namespace: pod.metadata.namespace, name: pod.metadata.name,
        scheduler: (pod.spec && pod.spec.schedulerName) || '', message: (cond && cond.message) || '', reason: (cond && cond.reason) || '' });
    }
  }
  placed.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.key < b.key ? -1 : 1));
  return { groups, other, placed: placed.slice(0, recent), placedTotal: placed.length };
}

/**
 * filterRows(attempt) lists every node the attempt names, by name:
 * {node, result: 'pass'|'fail', cells: [{plugin, state}], plugin, code,
 * reason} where state is pass, fail, notrun (after the rejecting plugin)
 * or skip (the plugin had nothing to check for this pod), and reason is
 * the rejection with its numbers when the record has them. Groups whose
 * nodes are not all named add {more: n, plugin, reason} rows.
 */
export function filterRows(a) {
  const plugins = a.filterPlugins || [];
  const skipped = new Set(a.skippedFilters || []);
  const cellsFor = (rejectedBy) => {
    let ran = true;
    return plugins.map((plugin) => {
      if (skipped.has(plugin)) return { plugin, state: 'skip' };
      if (!ran) return { plugin, state: 'notrun' };
      if (plugin === rejectedBy) { ran = false; return { plugin, state: 'fail' }; }
      return { plugin, state: 'pass' };
    });
  };
  const rows = [];
  const more = [];
  for (const g of a.rejected || []) {
    const reasons = (g.reasons || []).join(', ');
    (g.nodes || []).forEach((node, i) => {
      const detail = g.details && g.details[i];
      rows.push({ node, result: 'fail', cells: cellsFor(g.plugin), plugin: g.plugin, code: g.code, reason: detail || reasons });
    });
    const hidden = (g.count || 0) - (g.nodes || []).length;
    if (hidden > 0) more.push({ more: hidden, plugin: g.plugin, reason: reasons });
  }
  for (const f of a.feasible || []) rows.push({ node: f.name, result: 'pass', cells: cellsFor(null), plugin: '', code: '', reason: '' });
  rows.sort((x, y) => numeric.compare(x.node, y.node));
  return rows.concat(more);
}

/**
 * scoreRows(attempt) is the feasible nodes, best total first:
 * {node, total, winner, tied, scores: [{plugin, weight, raw, normalized,
 * weighted}]}, and the scale of the bars: the highest total and the
 * highest weight.
 */
export function scoreRows(a) {
  const weights = new Map((a.scorePlugins || []).map((p) => [p.name, p.weight]));
  const tied = new Set(a.tie ? a.tie.nodes : []);
  const rows = (a.feasible || []).map((f) => ({
    node: f.name,
    total: f.total,
    winner: f.name === a.selectedNode,
    tied: tied.has(f.name),
    scores: (f.scores || []).map((s) => ({ ...s, weight: weights.get(s.plugin) ?? 1 })),
  }));
  rows.sort((x, y) => y.total - x.total || (y.winner ? 1 : 0) - (x.winner ? 1 : 0));
  const maxTotal = Math.max(1, ...rows.map((r) => r.total));
  const maxWeight = Math.max(1, ...[...weights.values()]);
  return { rows, maxTotal, maxWeight };
}
