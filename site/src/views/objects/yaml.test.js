// node --test: the YAML writer of the objects view (kubectl get -o yaml's shape).
import test from 'node:test';
import assert from 'node:assert/strict';
import { toYAML, scalar, compareKeys } from './yaml.js';

test('an object prints as kubectl get -o yaml prints it', () => {
  const pod = {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: 'web-7c9f8d6b5-abcde',
      namespace: 'default',
      labels: { app: 'web', 'pod-template-hash': '7c9f8d6b5' },
      annotations: {},
      creationTimestamp: '2026-12-02T00:00:00Z',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7c9f8d6b5', controller: true, blockOwnerDeletion: true, uid: 'u1' }],
    },
    spec: {
      containers: [{ name: 'hello', image: 'hello', args: ['--ticks=3'], resources: {}, ports: [] }],
      nodeName: 'node-1',
    },
    status: { phase: 'Running', podIP: '10.244.1.2', containerStatuses: [{ ready: true, restartCount: 0 }] },
  };
  assert.equal(toYAML(pod), `apiVersion: v1
kind: Pod
metadata:
  annotations: {}
  creationTimestamp: "2026-12-02T00:00:00Z"
  labels:
    app: web
    pod-template-hash: 7c9f8d6b5
  name: web-7c9f8d6b5-abcde
  namespace: default
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-7c9f8d6b5
    uid: u1
spec:
  containers:
  - args:
    - --ticks=3
    image: hello
    name: hello
    ports: []
    resources: {}
  nodeName: node-1
status:
  containerStatuses:
  - ready: true
    restartCount: 0
  phase: Running
  podIP: 10.244.1.2
`);
});

test('strings that YAML would read as something else are double-quoted', () => {
  for (const [in_, want] of [
    ['1', '"1"'],
    ['0755', '"0755"'],
    ['1.5', '"1.5"'],
    ['1e3', '"1e3"'],
    ['0x1F', '"0x1F"'],
    ['true', '"true"'],
    ['no', '"no"'],
    ['Off', '"Off"'],
    ['null', '"null"'],
    ['~', '"~"'],
    ['', '""'],
    ['2026-12-02', '"2026-12-02"'],
    ['2026-12-02T00:00:05Z', '"2026-12-02T00:00:05Z"'],
    ['1:20', '"1:20"'],
    ['.inf', '".inf"'],
    ['say "hi"\t', '"say \\"hi\\"\\t"'],
    ['bell\u0007', '"bell\\x07"'],
  ]) {
    assert.equal(scalar(in_), want, `scalar(${JSON.stringify(in_)})`);
  }
});

test('strings that cannot be plain are single-quoted, others are plain', () => {
  for (const [in_, want] of [
    ['*', "'*'"],
    ['- x', "'- x'"],
    ['key: value', "'key: value'"],
    ['a #comment', "'a #comment'"],
    [' lead', "' lead'"],
    ['trail ', "'trail '"],
    ['ends:', "'ends:'"],
    ["it's", "it's"],
    ['@at', "'@at'"],
    ["'q'", "'''q'''"],
    ['---', "'---'"],
    ['web-7c9f8d6b5', 'web-7c9f8d6b5'],
    ['a:b', 'a:b'],
    ['http://x/y', 'http://x/y'],
    ['10.244.1.2', '10.244.1.2'],
    ['-3x', '-3x'],
    ['Pod のイベント', 'Pod のイベント'],
    ['100m', '100m'],
    ['64Mi', '64Mi'],
  ]) {
    assert.equal(scalar(in_), want, `scalar(${JSON.stringify(in_)})`);
  }
});

test('numbers, booleans and null', () => {
  assert.equal(toYAML({ a: 3, b: 0.25, c: false, d: null, e: -1 }), 'a: 3\nb: 0.25\nc: false\nd: null\ne: -1\n');
});

test('multi-line strings are literal blocks with the right chomping', () => {
  assert.equal(toYAML({ a: 'x\ny' }), 'a: |-\n  x\n  y\n');
  assert.equal(toYAML({ a: 'x\ny\n' }), 'a: |\n  x\n  y\n');
  assert.equal(toYAML({ a: 'x\n\n' }), 'a: |+\n  x\n\n');
  assert.equal(toYAML({ a: 'x\n\ny' }), 'a: |-\n  x\n\n  y\n');
  assert.equal(toYAML({ a: '  x\ny' }), 'a: |2-\n    x\n  y\n');
  assert.equal(toYAML({ l: [{ s: 'p\nq\n' }] }), 'l:\n- s: |\n    p\n    q\n');
  // A space before a line break cannot survive a block: quoted instead.
  assert.equal(toYAML({ a: 'x \ny' }), 'a: "x \\ny"\n');
});

test('empty and nested collections', () => {
  assert.equal(toYAML({}), '{}\n');
  assert.equal(toYAML([]), '[]\n');
  assert.equal(toYAML({ a: [[1, 2], []], b: [{}] }), 'a:\n- - 1\n  - 2\n- []\nb:\n- {}\n');
  assert.equal(toYAML([{ a: 1, b: { c: 2 } }]), '- a: 1\n  b:\n    c: 2\n');
});

test('keys sort as go-yaml v2 sorts them', () => {
  const keys = ['b', 'a10', 'a2', 'A', 'a', 'a.b', 'a-b', 'a_b', 'x1y', 'x01y'];
  assert.deepEqual([...keys].sort(compareKeys), ['A', 'a', 'a-b', 'a.b', 'a2', 'a10', 'a_b', 'b', 'x1y', 'x01y']);
});
