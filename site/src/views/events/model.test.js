// node --test: events as kubectl events prints them, and the view's filters.
import test from 'node:test';
import assert from 'node:assert/strict';
import { eventTime, humanDuration, lastSeen, eventSource, eventObject, matches, sortEvents, eventCount } from './model.js';

const now = Date.parse('2026-12-02T01:00:00Z');
const ev = (name, extra) => ({ metadata: { name, namespace: 'default' }, type: 'Normal', ...extra });

test('humanDuration is HumanDuration', () => {
  for (const [s, want] of [[-5, '<invalid>'], [-1, '0s'], [0, '0s'], [59, '59s'], [119, '119s'], [120, '2m'], [200, '3m20s'],
    [600, '10m'], [179 * 60, '179m'], [3 * 3600, '3h'], [5 * 3600 + 600, '5h10m'], [30 * 3600, '30h'], [3 * 86400 + 4 * 3600, '3d4h'],
    [4 * 86400, '4d'], [40 * 86400, '40d'], [800 * 86400, '2y70d'], [3650 * 86400, '10y']]) {
    assert.equal(humanDuration(s * 1000), want, `${s}s`);
  }
});

test('the last time and LAST SEEN, with the count of a repeated event', () => {
  const once = ev('a', { lastTimestamp: '2026-12-02T00:59:55Z', firstTimestamp: '2026-12-02T00:59:55Z', count: 1 });
  const again = ev('b', { lastTimestamp: '2026-12-02T00:59:50Z', firstTimestamp: '2026-12-02T00:59:00Z', count: 3 });
  const series = ev('c', { eventTime: '2026-12-02T00:58:00.000000Z', series: { count: 4, lastObservedTime: '2026-12-02T00:59:58.000000Z' } });
  assert.equal(lastSeen(once, now), '5s');
  assert.equal(lastSeen(again, now), '10s (x3 over 60s)');
  assert.equal(lastSeen(series, now), '2s (x4 over 2m)');
  assert.equal(eventCount(series), 4);
  assert.equal(eventTime(series), Date.parse('2026-12-02T00:59:58Z'));
  assert.deepEqual(sortEvents([once, series, again]).map((e) => e.metadata.name), ['b', 'a', 'c']);
});

test('source and object', () => {
  assert.equal(eventSource({ source: { component: 'kubelet', host: 'node-1' } }), 'kubelet, node-1');
  assert.equal(eventSource({ source: {}, reportingComponent: 'default-scheduler' }), 'default-scheduler');
  assert.equal(eventObject({ metadata: { namespace: 'default' }, involvedObject: { kind: 'Pod', name: 'web-1' } }), 'Pod/default/web-1');
  assert.equal(eventObject({ metadata: { namespace: 'default' }, involvedObject: { kind: 'Node', name: 'node-1', namespace: '' } }), 'Node//node-1');
});

test('filters: by object text and by type', () => {
  const pulled = ev('p', { reason: 'Pulled', involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-7c9-abcde' } });
  const warn = ev('w', { type: 'Warning', reason: 'BackOff', involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-7c9-zzzzz' } });
  const scaled = ev('s', { reason: 'ScalingReplicaSet', involvedObject: { kind: 'Deployment', namespace: 'default', name: 'web' } });
  const all = [pulled, warn, scaled];
  const names = (f) => all.filter((e) => matches(e, f)).map((e) => e.metadata.name);
  assert.deepEqual(names({}), ['p', 'w', 's']);
  assert.deepEqual(names({ text: 'abcde' }), ['p']);
  assert.deepEqual(names({ text: 'Pod/default/web-7c9-abcde' }), ['p']);
  assert.deepEqual(names({ text: 'pod/web-7c9-abcde' }), ['p']);
  assert.deepEqual(names({ text: 'deployment web' }), ['s']);
  assert.deepEqual(names({ text: 'web' }), ['p', 'w', 's']);
  assert.deepEqual(names({ type: 'Warning' }), ['w']);
  assert.deepEqual(names({ type: 'Normal', text: 'web-7c9' }), ['p']);
  assert.deepEqual(names({ text: 'nothing' }), []);
});
