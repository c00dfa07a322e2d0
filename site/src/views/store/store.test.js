import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toYAML, scalar } from './yaml.js';
import { diffLines, hunks } from './diff.js';
import { Tree, sortedChildren } from './tree.js';

test('toYAML writes an object as kubectl -o yaml does', () => {
  const dep = {
    kind: 'Deployment', apiVersion: 'apps/v1',
    metadata: { name: 'web', namespace: 'default', annotations: { 'deployment.kubernetes.io/revision': '1' }, labels: {} },
    spec: { replicas: 3, paused: false, template: { spec: { containers: [{ name: 'hello', image: 'hello', args: [], ports: [{ containerPort: 80 }] }] } } },
    status: { conditions: [], note: null },
  };
  assert.equal(toYAML(dep), `apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    deployment.kubernetes.io/revision: "1"
  labels: {}
  name: web
  namespace: default
spec:
  paused: false
  replicas: 3
  template:
    spec:
      containers:
      - args: []
        image: hello
        name: hello
        ports:
        - containerPort: 80
status:
  conditions: []
  note: null
`);
  assert.equal(toYAML([[1, 2], []]), '- - 1\n  - 2\n- []\n');
});

test('scalar quotes what YAML would misread', () => {
  const cases = [
    ['web', 'web'], ['', '""'], ['true', '"true"'], ['yes', '"yes"'], ['123', '"123"'], ['1.5', '"1.5"'],
    ['1e3', '"1e3"'], ['0x1F', '"0x1F"'], ['null', '"null"'], ['2026-12-01', '"2026-12-01"'],
    ['2026-12-01T10:00:00Z', '"2026-12-01T10:00:00Z"'], ['10:30', '"10:30"'],
    ['a: b', "'a: b'"], ['- x', "'- x'"], ['*', "'*'"], [' lead', "' lead'"], ["it's: x", "'it''s: x'"],
    ['a #b', "'a #b'"], ['k8s.io/x', 'k8s.io/x'], ['100m', '100m'], ['1Gi', '1Gi'], ['tab\there', '"tab\\there"'],
    [12, '12'], [false, 'false'], [null, 'null'],
  ];
  for (const [v, want] of cases) assert.equal(scalar(v), want, JSON.stringify(v));
  assert.equal(toYAML({ s: 'a\nb\n' }), 's: |\n  a\n  b\n');
  assert.equal(toYAML({ s: 'a\nb' }), 's: |-\n  a\n  b\n');
  assert.equal(toYAML({ s: 'a\n\n' }), 's: |+\n  a\n\n');
});

test('diffLines finds the changed lines between two versions', () => {
  const a = 'a\nb\nc\nd\ne\n';
  const b = 'a\nb\nC\nd\ne\nf\n';
  assert.deepEqual(diffLines(a, b).map((l) => l.op + l.line), [' a', ' b', '-c', '+C', ' d', ' e', '+f']);
  assert.deepEqual(diffLines('', 'x\n').map((l) => l.op + l.line), ['+x']);
  assert.deepEqual(diffLines('x\ny\n', '').map((l) => l.op + l.line), ['-x', '-y']);
  assert.deepEqual(diffLines('same\n', 'same\n').map((l) => l.op + l.line), [' same']);
  // A moved line is one removal and one addition, the rest kept.
  assert.deepEqual(diffLines('1\n2\n3\n4\n', '2\n3\n1\n4\n').map((l) => l.op + l.line), ['-1', ' 2', ' 3', '+1', ' 4']);
});

test('hunks folds the unchanged lines away from a change', () => {
  const a = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
  const b = a.replace('l10', 'L10');
  const h = hunks(diffLines(a, b), 2);
  assert.deepEqual(h.map((l) => (l.op === '…' ? `…${l.count}` : l.op + l.line)), ['…8', ' l8', ' l9', '-l10', '+L10', ' l11', ' l12', '…7']);
});

test('Tree reports only what changed', () => {
  const key = (k, rev) => [k.slice(1).replaceAll('/', '.'), { key: k, modRevision: rev }];
  const t = new Tree();
  let items = new Map([key('/registry/pods/default/a', 5), key('/registry/pods/default/b', 6), key('/registry/namespaces/default', 2)]);
  let ch = t.update(items);
  assert.equal(t.root.count, 3);
  assert.equal(t.find('/registry/pods/default').count, 2);
  assert.deepEqual(sortedChildren(t.find('/registry')).map((n) => n.name), ['namespaces', 'pods']);
  assert.equal(ch.leaves.size, 3);

  // One key rewritten: one leaf, no folder.
  items = new Map(items);
  items.set(...key('/registry/pods/default/a', 9));
  ch = t.update(items);
  assert.deepEqual([...ch.leaves].map((n) => n.path), ['/registry/pods/default/a']);
  assert.equal(ch.folders.size, 0);
  assert.equal(t.find('/registry/pods/default/a').leaf.modRevision, 9);

  // Nothing written: nothing reported.
  ch = t.update(items);
  assert.equal(ch.leaves.size + ch.folders.size + ch.counted.size, 0);

  // A key deleted: its folder changes, the counts drop; an emptied folder goes.
  items.delete('registry.pods.default.a');
  items.delete('registry.pods.default.b');
  ch = t.update(items);
  assert.equal(t.find('/registry/pods'), null);
  assert.equal(t.root.count, 1);
  assert.ok(ch.folders.has(t.find('/registry')));
});
