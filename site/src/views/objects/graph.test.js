// node --test: the object graph's model (who points at whom) and layout.
import test from 'node:test';
import assert from 'node:assert/strict';
import { build, layout, objectId, parseId, revision, edgePath } from './graph.js';

const meta = (name, extra = {}) => ({ name, namespace: 'default', uid: `uid-${name}`, creationTimestamp: extra.at || '2026-12-02T00:00:00Z', ...extra.meta });
const owner = (kind, name) => [{ apiVersion: 'apps/v1', kind, name, uid: `uid-${name}`, controller: true }];
const map = (...objs) => new Map(objs.map((o) => [`${o.metadata.namespace ? o.metadata.namespace + '/' : ''}${o.metadata.name}`, o]));

function rs(name, rev, desired, ready) {
  return {
    metadata: meta(name, { meta: { ownerReferences: owner('Deployment', 'web'), labels: { app: 'web', 'pod-template-hash': name.split('-')[1] }, annotations: { 'deployment.kubernetes.io/revision': String(rev) } } }),
    spec: { replicas: desired }, status: { replicas: desired, readyReplicas: ready },
  };
}
function pod(name, rsName, node, phase = 'Running', at = '2026-12-02T00:00:01Z') {
  return {
    metadata: meta(name, { at, meta: { ownerReferences: owner('ReplicaSet', rsName) } }),
    spec: { nodeName: node, containers: [{ name: 'hello' }] },
    status: phase === 'Pending' ? { phase } : {
      phase: phase === 'Running' ? 'Running' : 'Pending',
      containerStatuses: [{ ready: phase === 'Running', state: phase === 'Running' ? { running: {} } : { waiting: { reason: phase } } }],
    },
  };
}
const node = (name) => ({ metadata: { name, uid: `uid-${name}` }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });

function rollout() {
  return {
    deployments: map({ metadata: meta('web', { meta: { annotations: { 'deployment.kubernetes.io/revision': '2' } } }), spec: { replicas: 3 }, status: { readyReplicas: 2, updatedReplicas: 2 } }),
    replicasets: map(rs('web-old', 1, 1, 1), rs('web-new', 2, 3, 1)),
    pods: map(
      pod('web-old-aaaaa', 'web-old', 'node-1'),
      pod('web-new-ccccc', 'web-new', '', 'Pending', '2026-12-02T00:00:03Z'),
      pod('web-new-bbbbb', 'web-new', 'node-2', 'Running', '2026-12-02T00:00:02Z'),
      pod('web-new-ddddd', 'web-new', 'node-2', 'ContainerCreating', '2026-12-02T00:00:04Z'),
    ),
    nodes: map(node('node-2'), node('node-1'), node('node-3')),
    services: map({ metadata: meta('web'), spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ port: 80, protocol: 'TCP' }] } }),
    endpointslices: map({
      metadata: meta('web-x1y2z', { meta: { labels: { 'kubernetes.io/service-name': 'web' } } }),
      endpoints: [
        { targetRef: { kind: 'Pod', name: 'web-old-aaaaa', namespace: 'default' }, conditions: { ready: true } },
        { targetRef: { kind: 'Pod', name: 'web-new-bbbbb', namespace: 'default' }, conditions: { ready: true } },
        { targetRef: { kind: 'Pod', name: 'web-gone', namespace: 'default' }, conditions: { ready: false } },
      ],
    }),
  };
}

test('ids are Kind/namespace/name, and Node//name for a node', () => {
  assert.equal(objectId('Pod', { metadata: { name: 'p', namespace: 'ns' } }), 'Pod/ns/p');
  assert.equal(objectId('Node', { metadata: { name: 'node-1' } }), 'Node//node-1');
  assert.deepEqual(parseId('Node//node-1'), { kind: 'Node', namespace: '', name: 'node-1' });
  assert.equal(revision({ metadata: { annotations: { 'deployment.kubernetes.io/revision': '7' } } }), 7);
});

test('a rollout: the Deployment, both ReplicaSets newest first, their pods, nodes', () => {
  const g = build(rollout());
  assert.deepEqual(g.columns.map((c) => c.map((n) => n.id)), [
    ['Deployment/default/web', 'Service/default/web'],
    ['ReplicaSet/default/web-new', 'ReplicaSet/default/web-old', 'EndpointSlice/default/web-x1y2z'],
    ['Pod/default/web-new-bbbbb', 'Pod/default/web-new-ccccc', 'Pod/default/web-new-ddddd', 'Pod/default/web-old-aaaaa'],
    ['Node//node-1', 'Node//node-2', 'Node//node-3'],
  ]);
  assert.deepEqual(g.edges.map((e) => e.id).sort(), [
    'Deployment/default/web->ReplicaSet/default/web-new',
    'Deployment/default/web->ReplicaSet/default/web-old',
    'EndpointSlice/default/web-x1y2z->Pod/default/web-new-bbbbb',
    'EndpointSlice/default/web-x1y2z->Pod/default/web-old-aaaaa',
    'Pod/default/web-new-bbbbb->Node//node-2',
    'Pod/default/web-new-ddddd->Node//node-2',
    'Pod/default/web-old-aaaaa->Node//node-1',
    'ReplicaSet/default/web-new->Pod/default/web-new-bbbbb',
    'ReplicaSet/default/web-new->Pod/default/web-new-ccccc',
    'ReplicaSet/default/web-new->Pod/default/web-new-ddddd',
    'ReplicaSet/default/web-old->Pod/default/web-old-aaaaa',
    'Service/default/web->EndpointSlice/default/web-x1y2z',
  ]);
  const n = g.byId;
  assert.deepEqual([n.get('ReplicaSet/default/web-new').revision, n.get('ReplicaSet/default/web-new').hash,
    n.get('ReplicaSet/default/web-new').desired, n.get('ReplicaSet/default/web-new').ready], [2, 'new', 3, 1]);
  assert.equal(n.get('ReplicaSet/default/web-old').label, '…-old');
  assert.equal(n.get('Pod/default/web-new-ccccc').label, '…-ccccc');
  assert.deepEqual(['bbbbb', 'ccccc', 'ddddd'].map((s) => n.get(`Pod/default/web-new-${s}`).status), ['Running', 'Pending', 'ContainerCreating']);
  assert.deepEqual(['bbbbb', 'ccccc', 'ddddd'].map((s) => n.get(`Pod/default/web-new-${s}`).cls), ['ok', 'wait', 'wait']);
  assert.equal(n.get('Node//node-2').pods, 2);
  assert.equal(n.get('EndpointSlice/default/web-x1y2z').readyEndpoints, 2);
});

test('a namespace filter keeps the nodes and only that namespace\'s objects', () => {
  const c = rollout();
  const other = pod('db-1', 'db', 'node-3');
  other.metadata.namespace = 'data';
  c.pods.set('data/db-1', other);
  assert.ok(build(c).byId.has('Pod/data/db-1'));
  const g = build(c, { namespace: 'data' });
  assert.deepEqual(g.nodes.map((x) => x.id), ['Pod/data/db-1', 'Node//node-1', 'Node//node-2', 'Node//node-3']);
  assert.deepEqual(g.edges.map((e) => e.id), ['Pod/data/db-1->Node//node-3']);
});

test('many pods collapse into one group per ReplicaSet, with counts per node', () => {
  const c = rollout();
  for (let i = 0; i < 25; i++) c.pods.set(`default/web-new-p${i}`, pod(`web-new-p${i}`, 'web-new', i % 2 ? 'node-1' : 'node-3', i < 20 ? 'Running' : 'Pending'));
  // A pod whose container failed to start.
  c.pods.set('default/web-new-bad', pod('web-new-bad', 'web-new', 'node-3', 'ErrImagePull'));
  const g = build(c);
  const grp = g.byId.get('Pods/default/web-new');
  assert.ok(grp, 'the group exists');
  assert.equal(grp.count, 29);
  assert.deepEqual(grp.counts, { ok: 21, wait: 7, bad: 1 });
  assert.equal(grp.ready, 21);
  assert.ok(!g.byId.has('Pod/default/web-new-bbbbb'));
  assert.ok(g.byId.has('Pod/default/web-old-aaaaa'), 'the small ReplicaSet still shows its pod');
  const e = Object.fromEntries(g.edges.map((x) => [x.id, x.count]));
  assert.equal(e['ReplicaSet/default/web-new->Pods/default/web-new'], 29);
  assert.equal(e['Pods/default/web-new->Node//node-1'], 12);
  assert.equal(e['Pods/default/web-new->Node//node-3'], 14);
  assert.equal(e['EndpointSlice/default/web-x1y2z->Pods/default/web-new'], 1);
  // Expanded on request.
  const open = build(c, { expanded: new Set(['ReplicaSet/default/web-new']) });
  assert.ok(open.byId.has('Pod/default/web-new-p24'));
  assert.ok(!open.byId.has('Pods/default/web-new'));
});

test('layout: columns left to right, no overlaps, owners beside their children', () => {
  const g = build(rollout());
  const box = layout(g, { width: 600, gap: 16, vgap: 6 });
  for (const col of g.columns) {
    for (let i = 1; i < col.length; i++) assert.ok(col[i].y >= col[i - 1].y + col[i - 1].h, `${col[i].id} overlaps ${col[i - 1].id}`);
  }
  for (let c = 1; c < 4; c++) assert.ok(g.columns[c][0].x > g.columns[c - 1][0].x + g.columns[c - 1][0].w);
  assert.ok(box.width <= 600);
  const dep = g.byId.get('Deployment/default/web');
  const rsNew = g.byId.get('ReplicaSet/default/web-new');
  const pods = ['bbbbb', 'ccccc', 'ddddd'].map((s) => g.byId.get(`Pod/default/web-new-${s}`));
  const mid = (n) => n.y + n.h / 2;
  assert.equal(mid(rsNew), Math.round((mid(pods[0]) + mid(pods[1]) + mid(pods[2])) / 3) + (mid(rsNew) % 1));
  assert.ok(mid(dep) > mid(rsNew), 'the Deployment sits between its two ReplicaSets');
  // A narrow panel: columns keep a minimum width and the graph gets wider than the panel.
  const narrow = layout(build(rollout()), { width: 200 });
  assert.ok(narrow.width > 200);
  assert.match(edgePath({ x: 0, y: 0, w: 10, h: 10 }, { x: 40, y: 20, w: 10, h: 10 }), /^M10,5 C25,5 25,25 40,25$/);
});

test('podStatus is kubectl get pods\' STATUS column', async () => {
  const { podStatus, nodeStatus } = await import('./graph.js');
  const p = (status, extra = {}) => ({ metadata: { name: 'p', ...extra.meta }, spec: extra.spec || {}, status });
  for (const [pod, want] of [
    [p({ phase: 'Pending' }), 'Pending'],
    [p({ phase: 'Running', containerStatuses: [{ ready: true, state: { running: {} } }] }), 'Running'],
    [p({ phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'ImagePullBackOff' } } }] }), 'ImagePullBackOff'],
    [p({ phase: 'Running', containerStatuses: [{ state: { waiting: { reason: 'CrashLoopBackOff' } } }] }), 'CrashLoopBackOff'],
    [p({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] }), 'OOMKilled'],
    [p({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 3 } } }] }), 'ExitCode:3'],
    [p({ phase: 'Succeeded', containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }] }), 'Completed'],
    [p({ phase: 'Pending', initContainerStatuses: [{ state: { waiting: { reason: 'PodInitializing' } } }] }, { spec: { initContainers: [{}] } }), 'Init:0/1'],
    [p({ phase: 'Pending', initContainerStatuses: [{ state: { terminated: { exitCode: 0 } } }, { state: { waiting: { reason: 'ErrImagePull' } } }] }, { spec: { initContainers: [{}, {}] } }), 'Init:ErrImagePull'],
    [p({ phase: 'Running', containerStatuses: [{ ready: true, state: { running: {} } }] }, { meta: { deletionTimestamp: '2026-12-02T00:00:00Z' } }), 'Terminating'],
  ]) {
    assert.equal(podStatus(pod), want, JSON.stringify(pod.status));
  }
  assert.equal(nodeStatus({ status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }), 'NotReady');
  assert.equal(nodeStatus({ spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }), 'Ready,SchedulingDisabled');
});
