// node --test: the flow view's model: which hops the path filter keeps, the
// boxes, request lines, following an object, the bounded window and its
// numbering, the per-arrow counts, YAML.
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  compact, onPath, boxOf, nodeOf, stageOf, kindOf, protocolOf, arrowLabel, requestLine, objectPath,
  storeKeyName, follower, descendants, HopWindow, aggregate, toYAML,
} from './hops.js';

let seq = 0;
const hop = (type, from, to, verb, res = '', ns = '', name = '', extra = {}) => compact({
  seq: ++seq, type, from, to, verb, object: res || name ? { resource: res, namespace: ns, name } : undefined, ...extra,
});

// The start of `kubectl create deployment web --image=hello --replicas=3`, as
// kubetab records it (bin/kubetab cluster; kubectl get --raw .../hops).
function deploymentHops() {
  seq = 0;
  return [
    hop('request', 'kubectl', 'kube-apiserver', 'create', 'deployments.apps', 'default', 'web'),
    hop('write', 'kube-apiserver', 'etcd', 'put', 'deployments.apps', 'default', 'web', { key: '/registry/deployments/default/web', revision: 57 }),
    hop('watch', 'kube-apiserver', 'disruption-controller', 'ADDED', 'deployments.apps', 'default', 'web', { revision: 57 }),
    hop('watch', 'kube-apiserver', 'deployment-controller', 'ADDED', 'deployments.apps', 'default', 'web', { revision: 57 }),
    hop('request', 'deployment-controller', 'kube-apiserver', 'create', 'replicasets.apps', 'default', 'web-7bdd6c8b89'),
    hop('write', 'kube-apiserver', 'etcd', 'put', 'replicasets.apps', 'default', 'web-7bdd6c8b89', { key: '/registry/replicasets/default/web-7bdd6c8b89', revision: 58 }),
    hop('response', 'kube-apiserver', 'deployment-controller', '', 'replicasets.apps', 'default', 'web-7bdd6c8b89', { code: 201 }),
    hop('request', 'deployment-controller', 'kube-apiserver', 'create', 'events', 'default', 'web.18ed48a80436b8ce'),
    hop('watch', 'kube-apiserver', 'replicaset-controller', 'ADDED', 'replicasets.apps', 'default', 'web-7bdd6c8b89', { revision: 58 }),
    hop('request', 'replicaset-controller', 'kube-apiserver', 'create', 'pods', 'default', 'web-7bdd6c8b89-'),
    hop('write', 'kube-apiserver', 'etcd', 'put', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { key: '/registry/pods/default/web-7bdd6c8b89-vrl2z', revision: 62 }),
    hop('response', 'kube-apiserver', 'replicaset-controller', '', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { code: 201 }),
    hop('request', 'generic-garbage-collector', 'kube-apiserver', 'get', 'replicasets.apps', 'default', 'web-7bdd6c8b89'),
    hop('watch', 'kube-apiserver', 'kube-scheduler', 'ADDED', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { revision: 62 }),
    hop('watch', 'kube-apiserver', 'kube-scheduler', 'MODIFIED', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { revision: 63 }),
    hop('decision', 'kube-scheduler', '', 'schedule', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { detail: 'node-2 (3 of 3 nodes evaluated fit)' }),
    hop('request', 'kube-scheduler', 'kube-apiserver', 'create', 'pods/binding', 'default', 'web-7bdd6c8b89-vrl2z'),
    hop('write', 'kube-apiserver', 'etcd', 'put', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { key: '/registry/pods/default/web-7bdd6c8b89-vrl2z', revision: 70 }),
    hop('watch', 'kube-apiserver', 'kubelet/node-2', 'ADDED', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { revision: 70 }),
    hop('call', 'kubelet/node-2', 'cni', 'ADD', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { detail: '10.244.2.2' }),
    hop('call', 'kubelet/node-2', 'cri', 'StartContainer', 'pods', 'default', 'web-7bdd6c8b89-vrl2z', { detail: 'hello' }),
    hop('request', 'kubelet/node-2', 'kube-apiserver', 'update', 'leases.coordination.k8s.io', 'kube-node-lease', 'node-2'),
    hop('request', 'kubelet/node-2', 'kube-apiserver', 'update', 'nodes/status', '', 'node-2'),
    hop('request', 'kube-proxy/node-1', 'kube-apiserver', 'list', 'services', '', ''),
  ];
}

test('the path filter keeps the seeds\' path and drops reads, answers, events, heartbeats and idle watchers', () => {
  const kept = deploymentHops().filter(onPath).map((h) => `${h.type} ${h.from}>${h.to} ${h.verb} ${h.res}`);
  assert.deepEqual(kept, [
    'request kubectl>kube-apiserver create deployments.apps',
    'write kube-apiserver>etcd put deployments.apps',
    'watch kube-apiserver>deployment-controller ADDED deployments.apps',
    'request deployment-controller>kube-apiserver create replicasets.apps',
    'write kube-apiserver>etcd put replicasets.apps',
    'watch kube-apiserver>replicaset-controller ADDED replicasets.apps',
    'request replicaset-controller>kube-apiserver create pods',
    'write kube-apiserver>etcd put pods',
    'watch kube-apiserver>kube-scheduler ADDED pods',
    'decision kube-scheduler> schedule pods',
    'request kube-scheduler>kube-apiserver create pods/binding',
    'write kube-apiserver>etcd put pods',
    'watch kube-apiserver>kubelet/node-2 ADDED pods',
    'call kubelet/node-2>cni ADD pods',
    'call kubelet/node-2>cri StartContainer pods',
  ]);
});

test('boxes, nodes, kinds, stages and protocols', () => {
  const cases = [
    [['kubectl'], 'kubectl'],
    [['kube-apiserver'], 'kube-apiserver'],
    [['kubelet/node-2'], 'kubelet@node-2'],
    [['kube-proxy/node-1'], 'kube-proxy@node-1'],
    [['cni', 'kubelet/node-3'], 'cni@node-3'],
    [['deployment-controller'], 'ctrl:deployment-controller'],
    [['generic-garbage-collector'], 'ctrl:generic-garbage-collector'],
    [['root-ca-cert-publisher'], 'ctrl:root-ca-cert-publisher'],
    [['coredns'], 'client:coredns'],
    [[''], ''],
  ];
  for (const [args, want] of cases) assert.equal(boxOf(...args), want, args.join(' '));
  const hops = deploymentHops();
  assert.equal(nodeOf(hops[15]), 'node-2'); // the decision names its node
  assert.equal(nodeOf(hops[19]), 'node-2');
  assert.deepEqual(hops.slice(0, 21).filter(onPath).map(stageOf), [1, 2, 3, 3, 2, 3, 3, 2, 4, 4, 4, 2, 5, 6, 8]);
  assert.deepEqual([hops[19], hops[20], hops[1]].map(kindOf), ['cni', 'cri', 'write']);
  assert.deepEqual([hops[0], hops[4], hops[3], hops[1], hops[19]].map(protocolOf), ['http', 'inprocess', 'watch', 'etcd', 'cni']);
  assert.deepEqual([hops[0], hops[1], hops[3], hops[6], hops[15], hops[16]].map(arrowLabel),
    ['create deployments', 'put rev 57', 'ADDED deployments', '201', '→ node-2', 'create pods/binding']);
});

test('request lines and object paths', () => {
  const hops = deploymentHops();
  const v = { apps: 'v1', 'coordination.k8s.io': 'v1' };
  assert.equal(requestLine(hops[0], v), 'POST /apis/apps/v1/namespaces/default/deployments');
  assert.equal(requestLine(hops[9], v), 'POST /api/v1/namespaces/default/pods');
  assert.equal(requestLine(hops[16], v), 'POST /api/v1/namespaces/default/pods/web-7bdd6c8b89-vrl2z/binding');
  assert.equal(requestLine(hops[21], v), 'PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-2');
  assert.equal(requestLine(hops[22], v), 'PUT /api/v1/nodes/node-2/status');
  assert.equal(requestLine(hops[23], v), 'GET /api/v1/services');
  assert.equal(objectPath(hops[16], v), '/api/v1/namespaces/default/pods/web-7bdd6c8b89-vrl2z');
  assert.equal(objectPath(hops[9], v), ''); // generateName: no object yet
  assert.equal(storeKeyName('/registry/deployments/default/web'), 'registry.deployments.default.web');
});

test('following web takes its ReplicaSet and pods, by owner and by name, and not web2', () => {
  const rs = { metadata: { name: 'web-abc', uid: 'u2', namespace: 'default', ownerReferences: [{ uid: 'u1' }] } };
  const dep = { metadata: { name: 'web', uid: 'u1', namespace: 'default' } };
  const pod = { metadata: { name: 'custom-pod', uid: 'u3', namespace: 'default', ownerReferences: [{ uid: 'u2' }] } };
  const other = { metadata: { name: 'web2-abc', uid: 'u4', namespace: 'default', ownerReferences: [{ uid: 'u9' }] } };
  const names = descendants('web', 'default', new Map([['d', dep]]), new Map([['r', rs], ['o', other]]), new Map([['p', pod]]));
  assert.deepEqual([...names].sort(), ['custom-pod', 'web', 'web-abc']);
  const match = follower('web', names);
  const n = (name) => match({ name });
  assert.ok(n('web') && n('web-abc') && n('custom-pod') && n('web-abc-'));
  assert.ok(n('web-7bdd6c8b89') && n('web-7bdd6c8b89-vrl2z') && n('web-7bdd6c8b89-'), 'the naming rule covers what the cache has not seen');
  assert.ok(!n('web2') && !n('web2-abc') && !n('webby') && !n(''));
  assert.equal(follower(''), null);
});

test('the window keeps at most its size, numbers visible hops, and counts per arrow', () => {
  const w = new HopWindow(10);
  const hops = deploymentHops();
  assert.equal(w.push(hops), 15);
  assert.equal(w.all.length, 10, '24 hops are over 1.25 times the size: the oldest go');
  assert.equal(w.all[0].seq, 15);
  assert.deepEqual(w.vis.map((h) => h.n), [10, 11, 12, 13, 14, 15], 'numbers stay as given');
  assert.equal(w.push([]), 0);
  // Pushing more trims to size, keeping the newest.
  const more = [];
  for (let i = 0; i < 5; i++) more.push(compact({ seq: 100 + i, type: 'write', from: 'kube-apiserver', to: 'etcd', verb: 'put', object: { resource: 'pods', name: `p${i}` }, revision: 200 + i }));
  w.push(more);
  assert.equal(w.all.length, 10);
  assert.equal(w.all[0].seq, 20);
  assert.deepEqual(w.vis.map((h) => h.n), [14, 15, 16, 17, 18, 19, 20]);
  assert.equal(w.push(more), 0, 'a hop seen before is not added twice');

  const w2 = new HopWindow(100);
  w2.push(deploymentHops());
  w2.setFilter({ follow: follower('web'), path: true });
  assert.equal(w2.vis.length, 15);
  w2.setFilter({ path: false });
  assert.equal(w2.vis.length, 21, 'all hops about web and its descendants, except the lease and node and the list');
  w2.setFilter({ follow: null, path: true, origin: 9 });
  assert.equal(w2.vis[0].seq, 10);
  assert.equal(w2.vis[0].n, 1, 'numbering starts at the origin');

  w2.setFilter({ origin: 0 });
  const edges = aggregate(w2.vis, w2.vis.length - 1);
  const etcd = edges.get('kube-apiserver|etcd|write');
  assert.equal(etcd.count, 4);
  assert.equal(etcd.last.rev, 70);
  assert.equal(edges.get('kube-scheduler|node:node-2|decision').count, 1);
  assert.equal(edges.get('kubelet@node-2|cni@node-2|cni').count, 1);
  assert.equal(aggregate(w2.vis, 2).size, 3);

  const req = w2.find(5);
  assert.equal(w2.responseTo(req).code, 201);
  assert.equal(w2.writeOf(req).rev, 58);
  assert.equal(w2.writeOf(w2.find(10)).name, 'web-7bdd6c8b89-vrl2z', 'a generateName create finds its write');
  assert.deepEqual(w2.notified(57), ['disruption-controller', 'deployment-controller']);
  assert.equal(w2.indexOf(5), 3);
  assert.equal(w2.indexOf(6000), -1);
});

test('YAML', () => {
  const obj = {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' }, creationTimestamp: '2026-12-02T00:35:21Z', annotations: {} },
    spec: { replicas: 3, paused: false, template: { spec: { containers: [{ name: 'hello', image: 'hello', args: ['a b', 'yes', ''] }] } } },
    status: {},
  };
  assert.equal(toYAML(obj), [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: web',
    '  labels:',
    '    app: web',
    '  creationTimestamp: "2026-12-02T00:35:21Z"',
    '  annotations: {}',
    'spec:',
    '  replicas: 3',
    '  paused: false',
    '  template:',
    '    spec:',
    '      containers:',
    '      - name: hello',
    '        image: hello',
    '        args:',
    '        - a b',
    '        - "yes"',
    '        - ""',
    'status: {}',
  ].join('\n'));
});
