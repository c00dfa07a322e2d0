import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queueGroups, filterRows, scoreRows } from './model.js';

const attempt = {
  attempt: 2, result: 'Unschedulable',
  filterPlugins: ['NodeUnschedulable', 'NodeName', 'TaintToleration', 'NodeAffinity', 'NodeResourcesFit'],
  skippedFilters: ['NodeAffinity'],
  rejected: [
    { plugin: 'TaintToleration', code: 'UnschedulableAndUnresolvable', reasons: ["node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"], count: 1, nodes: ['node-10'] },
    { plugin: 'NodeResourcesFit', code: 'Unschedulable', reasons: ['Insufficient cpu'], count: 4, nodes: ['node-2', 'node-1'],
      details: ['Insufficient cpu: requests 64, 3.2 of 4 free', 'Insufficient cpu: requests 64, 4 of 4 free'] },
  ],
  feasible: [],
};

test('filterRows: every node with each plugin, the reason with its numbers', () => {
  const rows = filterRows(attempt);
  assert.deepEqual(rows.map((r) => r.node || `+${r.more}`), ['node-1', 'node-2', 'node-10', '+2']);
  const n2 = rows[1];
  assert.equal(n2.result, 'fail');
  assert.equal(n2.reason, 'Insufficient cpu: requests 64, 3.2 of 4 free');
  assert.deepEqual(n2.cells.map((c) => c.state), ['pass', 'pass', 'pass', 'skip', 'fail']);
  assert.deepEqual(rows[2].cells.map((c) => c.state), ['pass', 'pass', 'fail', 'skip', 'notrun']);
  assert.equal(rows[2].reason, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }");
  assert.deepEqual(rows[3], { more: 2, plugin: 'NodeResourcesFit', reason: 'Insufficient cpu' });
  // Without details the reason is upstream's.
  const plain = filterRows({ ...attempt, rejected: [{ ...attempt.rejected[1], details: undefined, count: 2 }] });
  assert.equal(plain[0].reason, 'Insufficient cpu');
  // Feasible nodes pass every plugin that ran.
  const ok = filterRows({ filterPlugins: ['A', 'B'], skippedFilters: ['B'], feasible: [{ name: 'n' }] });
  assert.deepEqual(ok[0].cells.map((c) => c.state), ['pass', 'skip']);
  assert.equal(ok[0].result, 'pass');
});

test('scoreRows: best first, the winner, the tie, the bar scale', () => {
  const s = scoreRows({
    selectedNode: 'node-3',
    scorePlugins: [{ name: 'TaintToleration', weight: 3 }, { name: 'ImageLocality', weight: 1 }],
    feasible: [
      { name: 'node-1', total: 300, scores: [{ plugin: 'TaintToleration', raw: 0, normalized: 100, weighted: 300 }, { plugin: 'ImageLocality', raw: 0, normalized: 0, weighted: 0 }] },
      { name: 'node-3', total: 300, scores: [{ plugin: 'TaintToleration', raw: 0, normalized: 100, weighted: 300 }, { plugin: 'ImageLocality', raw: 0, normalized: 0, weighted: 0 }] },
      { name: 'node-2', total: 150, scores: [] },
    ],
    tie: { total: 300, count: 2, nodes: ['node-1', 'node-3'] },
  });
  assert.deepEqual(s.rows.map((r) => `${r.node}:${r.total}:${r.winner ? 'W' : ''}${r.tied ? 'T' : ''}`), ['node-3:300:WT', 'node-1:300:T', 'node-2:150:']);
  assert.equal(s.maxTotal, 300);
  assert.equal(s.maxWeight, 3);
  assert.equal(s.rows[0].scores[0].weight, 3);
});

test('queueGroups: the queue by queue, pods it does not hold, the latest placed', () => {
  const pod = (name, node, at, extra = {}) => ({ metadata: { namespace: 'default', name, creationTimestamp: at }, spec: { nodeName: node, ...extra.spec }, status: extra.status || {} });
  const pods = new Map([
    ['default/big', pod('big', '', '2026-12-01T10:00:00Z', { status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' }] } })],
    ['default/web-1', pod('web-1', 'node-1', '2026-12-01T10:00:01Z')],
    ['default/web-2', pod('web-2', 'node-2', '2026-12-01T10:00:02Z')],
    ['default/other', pod('other', '', '2026-12-01T10:00:03Z', { spec: { schedulerName: 'my-scheduler' } })],
  ]);
  const q = { pods: [{ namespace: 'default', name: 'big', queue: 'unschedulablePods', attempts: 2, unschedulablePlugins: ['NodeResourcesFit'], message: '' }] };
  const g = queueGroups(q, pods, 1);
  assert.equal(g.groups.unschedulablePods[0].message, '0/3 nodes are available: 3 Insufficient cpu.');
  assert.deepEqual(g.groups.unschedulablePods[0].plugins, ['NodeResourcesFit']);
  assert.deepEqual(g.other.map((o) => `${o.name}:${o.scheduler}`), ['other:my-scheduler']);
  assert.deepEqual(g.placed.map((p) => p.name), ['web-2']);
  assert.equal(g.placedTotal, 2);
});
