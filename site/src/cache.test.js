// node --test: the shared cache runs one list+watch per collection however
// many panels subscribe, tells them in batches, and stops the watch when the
// last one leaves.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Cache } from './cache.js';

const pod = (name, rv) => ({ metadata: { namespace: 'default', name, resourceVersion: String(rv) } });
const json = (obj) => new Response(JSON.stringify(obj), { headers: { 'Content-Type': 'application/json' } });

function fakeCluster() {
  const seen = [];
  const aborted = [];
  return {
    seen,
    aborted,
    ready: Promise.resolve(),
    async fetch(path, init = {}) {
      seen.push(path);
      if (!path.includes('watch=true')) return json({ metadata: { resourceVersion: '5' }, items: [pod('a', 4), pod('b', 5)] });
      const enc = new TextEncoder();
      return new Response(new ReadableStream({
        start(ctrl) {
          ctrl.enqueue(enc.encode(`${JSON.stringify({ type: 'ADDED', object: pod('c', 6) })}\n${JSON.stringify({ type: 'DELETED', object: pod('a', 7) })}\n`));
          init.signal.addEventListener('abort', () => { aborted.push(path); ctrl.error(new DOMException('aborted', 'AbortError')); });
        },
      }));
    },
  };
}

const until = async (cond, what) => {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
};

test('two subscribers share one informer, and see the same objects', async () => {
  const cluster = fakeCluster();
  const cache = new Cache(cluster);
  const seenA = [];
  const seenB = [];
  const offA = cache.subscribe('/api/v1/pods', (items) => seenA.push([...items.keys()].sort().join(',')));
  const offB = cache.subscribe('/api/v1/pods', (items) => seenB.push([...items.keys()].sort().join(',')));
  await until(() => seenA.at(-1) === 'default/b,default/c', 'the watch events');
  assert.equal(seenB.at(-1), 'default/b,default/c');
  assert.equal(cluster.seen.filter((p) => !p.includes('watch')).length, 1, 'one LIST for two subscribers');
  assert.equal(cache.state('/api/v1/pods'), 'live');
  offA();
  assert.deepEqual(cluster.aborted, [], 'a subscriber left; the watch goes on for the other');
  offB();
  await until(() => cluster.aborted.length === 1, 'the watch to stop');
  assert.equal(cache.items('/api/v1/pods').size, 0);
});
