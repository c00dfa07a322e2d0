// node --test: the page's informer (list, then watch from the list's
// resourceVersion, re-watch when a stream ends, relist on 410 Gone) against
// a scripted fake of the API.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Informer } from './informer.js';

const pod = (name, rv, phase = 'Pending') => ({ metadata: { namespace: 'default', name, resourceVersion: String(rv) }, status: { phase } });
const json = (obj, status = 200) => new Response(JSON.stringify(obj), { status, headers: { 'Content-Type': 'application/json' } });

// A watch body that sends events, then ends (or stays open until aborted).
function watchBody(events, { end = true, signal } = {}) {
  const enc = new TextEncoder();
  return new Response(new ReadableStream({
    start(ctrl) {
      // Split one event across two chunks, as a network would.
      const text = events.map((e) => `${JSON.stringify(e)}\n`).join('');
      const mid = Math.floor(text.length / 2);
      ctrl.enqueue(enc.encode(text.slice(0, mid)));
      ctrl.enqueue(enc.encode(text.slice(mid)));
      if (end) ctrl.close();
      else if (signal) signal.addEventListener('abort', () => ctrl.error(new DOMException('aborted', 'AbortError')));
    },
  }));
}

// fakeCluster answers requests from a script: one function per request, in order.
function fakeCluster(script) {
  const seen = [];
  return {
    seen,
    async fetch(path, init = {}) {
      seen.push(path);
      const step = script.shift();
      if (!step) return new Promise(() => {}); // nothing more: hang like an idle watch
      return step(path, init);
    },
  };
}

function waitFor(cond, what) {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 5000;
    const tick = () => {
      if (cond()) resolve();
      else if (Date.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
      else setTimeout(tick, 5);
    };
    tick();
  });
}

test('list, watch from its resourceVersion, apply events, re-watch, relist on 410', async () => {
  const cluster = fakeCluster([
    () => json({ kind: 'PodList', metadata: { resourceVersion: '10' }, items: [pod('a', 5)] }),
    () => watchBody([
      { type: 'ADDED', object: pod('b', 11) },
      { type: 'MODIFIED', object: pod('a', 12, 'Running') },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '14' } } },
    ]), // the stream ends: re-watch from 14
    () => watchBody([{ type: 'DELETED', object: pod('b', 15) }]),
    () => json({ kind: 'Status', code: 410, reason: 'Expired' }, 410), // too old: relist
    () => json({ kind: 'PodList', metadata: { resourceVersion: '30' }, items: [pod('c', 29)] }),
  ]);
  const states = [];
  const inf = new Informer(cluster, '/api/v1/pods', (items, state) => states.push([state, [...items.keys()].sort().join(',')]));
  inf.run();
  await waitFor(() => cluster.seen.length >= 6, 'the relist and the watch after it');
  inf.stop();

  assert.deepEqual(cluster.seen, [
    '/api/v1/pods',
    '/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=10',
    '/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=14',
    '/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=15',
    '/api/v1/pods',
    '/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=30',
  ]);
  assert.deepEqual(states[0], ['live', 'default/a']);
  assert.ok(states.some(([, keys]) => keys === 'default/a,default/b'), 'b was added');
  assert.deepEqual(states.at(-1), ['live', 'default/c']);
  assert.equal(inf.items.get('default/c').metadata.name, 'c');
});

test('an ERROR event relists; a failed request backs off and relists', async () => {
  const cluster = fakeCluster([
    () => json({ kind: 'NodeList', metadata: { resourceVersion: '3' }, items: [] }),
    () => watchBody([{ type: 'ERROR', object: { kind: 'Status', code: 410 } }], { end: false }),
    () => { throw new TypeError('kubetab: worker gone'); },
    () => json({ kind: 'NodeList', metadata: { resourceVersion: '9' }, items: [{ metadata: { name: 'node-1', resourceVersion: '8' } }] }),
  ]);
  let last = null;
  const inf = new Informer(cluster, '/api/v1/nodes', (items, state) => { last = [state, [...items.keys()]]; });
  inf.run();
  await waitFor(() => last && last[0] === 'live' && last[1][0] === 'node-1', 'node-1 after the relist');
  inf.stop();
  assert.deepEqual(cluster.seen.slice(0, 4), [
    '/api/v1/nodes',
    '/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=3',
    '/api/v1/nodes',
    '/api/v1/nodes',
  ]);
});

// A batch of thousands of events in one chunk is parsed over several tasks
// (pace.js), so the page gets turns in between: a message posted before the
// chunk arrives is handled while the chunk is still being applied, and the
// panels see all of them in the end.
test('a huge chunk is applied across several tasks', async () => {
  const events = [];
  for (let i = 0; i < 20000; i++) events.push({ type: 'ADDED', object: pod(`p${i}`, 11 + i) });
  const seenSizes = [];
  let turnAt = -1;
  let inf;
  const cluster = fakeCluster([
    () => json({ kind: 'PodList', metadata: { resourceVersion: '10' }, items: [] }),
    () => {
      // Another task asks for a turn while the chunk is being parsed.
      const ch = new MessageChannel();
      ch.port1.onmessage = () => { turnAt = inf.items.size; ch.port1.close(); };
      ch.port2.postMessage(0);
      return watchBody(events, { end: false });
    },
  ]);
  inf = new Informer(cluster, '/api/v1/pods', (items) => seenSizes.push(items.size));
  inf.run();
  await waitFor(() => inf.items.size === 20000, 'all 20000 pods');
  inf.stop();
  assert.ok(turnAt >= 0 && turnAt < 20000, `the other task ran at ${turnAt} of 20000 items`);
  assert.equal(seenSizes.at(-1), 20000);
});
