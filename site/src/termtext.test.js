// node --test: the console's text rules (stderr colours, widths, Tab's list).
import test from 'node:test';
import assert from 'node:assert/strict';
import { stderrKind, measure, columns, searchBack, LineSplitter } from './termtext.js';

test('stderrKind: errors are errors; "No resources found" is not', () => {
  const cases = [
    ['No resources found in default namespace.', 'plain'],
    ['No resources found', 'plain'],
    ["If you don't see a command prompt, try pressing enter.", 'plain'],
    ['error: the server doesn\'t have a resource type "podz"', 'error'],
    ['Error from server (NotFound): pods "x" not found', 'error'],
    ['Error: unknown flag: --bogus', 'error'],
    ['The Deployment "web" is invalid: spec.replicas: Invalid value: -1', 'error'],
    ['cat: x.yaml: No such file or directory', 'error'],
    ['kubetab: syntax error: unexpected end of file', 'error'],
    ['frob: command not found', 'error'],
    ['E1202 10:00:00.000000       1 reflector.go:1] failed', 'error'],
    ['Warning: resource deployments/web is missing the kubectl.kubernetes.io/last-applied-configuration annotation', 'warning'],
    ['I1202 10:00:00.000000       1 round_trippers.go:553] GET https://kubetab.local:6443/api 200 OK', 'info'],
  ];
  for (const [line, want] of cases) assert.equal(stderrKind(line), want, line);
});

test('measure counts columns, skipping escapes, CJK as two', () => {
  const m = (text, state) => { const r = measure(text, state); return [r.widest, r.col]; };
  assert.deepEqual(m('abc'), [3, 3]);
  assert.deepEqual(m('ab\ncdef\n'), [4, 0]);
  assert.deepEqual(m('\x1b[38;5;210merror\x1b[0m'), [5, 5]);
  assert.deepEqual(m('日本', { col: 2, gap: false, spaces: 0, ink: true }), [6, 6]);
  assert.deepEqual(m('a\tb'), [9, 9]);
});

test('measure tells table rows from prose', () => {
  assert.equal(measure('NAME    READY   STATUS\n').table, 22);
  assert.equal(measure('error: a long sentence with single spaces only\n').table, 0);
  assert.equal(measure('  kubectl  control the cluster\n').table, 30); // help's lines
  // a row split over two chunks keeps its state
  const st = { col: 0, gap: false, spaces: 0, ink: false };
  measure('web-1   1/1', st);
  assert.equal(measure('   Running\n', st).table, 21);
});

test('columns lays choices out down the columns', () => {
  assert.deepEqual(columns(['a', 'bb', 'c', 'd'], 12), ['a   c', 'bb  d']);
  assert.deepEqual(columns(['web-1', 'web-2'], 80), ['web-1  web-2']);
  assert.deepEqual(columns(['long-name'], 4), ['long-name']);
  assert.deepEqual(columns([], 80), []);
});

test('searchBack finds the newest match before from', () => {
  const h = ['kubectl get pods', 'trace web', 'kubectl get nodes'];
  assert.equal(searchBack(h, 'get', 3), 2);
  assert.equal(searchBack(h, 'get', 2), 0);
  assert.equal(searchBack(h, 'nope', 3), -1);
  assert.equal(searchBack(h, '', 3), 2);
});

test('LineSplitter keeps partial lines', () => {
  const s = new LineSplitter();
  assert.deepEqual(s.push('No res'), []);
  assert.deepEqual(s.push('ources\nerror: x\npart'), ['No resources\n', 'error: x\n']);
  assert.equal(s.rest(), 'part');
  assert.equal(s.rest(), '');
});
