// The hops as they happen: a list+watch of /apis/flow.kubetab.dev/v1alpha1/hops
// (docs/api.md) that keeps nothing itself and hands each chunk of the watch
// stream on as one batch. The shared cache (cache.js) would keep every hop
// in a Map for as long as the page lives; hops are many and never change,
// so the flow view keeps a bounded window instead (hops.js HopWindow).
//
//   LIST  hops?limit=1                 → metadata.resourceVersion = the newest Seq
//   WATCH hops?watch=true&resourceVersion=Seq-history
//                                      → ADDED for each hop after it, in order
//   410 Gone (the ring overtook us)    → LIST again
//
// It starts history hops back, so that an object created before the view
// opened can still be followed from its creation.

import { compact } from './hops.js';
import { due, yieldTask } from '../../pace.js';

const PATH = '/apis/flow.kubetab.dev/v1alpha1/hops';

export class HopStream {
  /**
   * @param {{fetch: Function, ready?: Promise}} cluster
   * @param {(records: object[]) => void} onHops  each batch, in Seq order
   */
  constructor(cluster, onHops, { history = 3000 } = {}) {
    this.cluster = cluster;
    this.onHops = onHops;
    this.history = history;
    this.last = 0; // the newest Seq handed on
    this.latest = 0; // the newest Seq when the stream started
    this.stopped = false;
    this.abort = null;
    this.state = 'connecting';
    this.onState = () => {};
  }

  setState(s) {
    this.state = s;
    this.onState(s);
  }

  stop() {
    this.stopped = true;
    if (this.abort) this.abort.abort();
  }

  async run() {
    let backoff = 200;
    await (this.cluster.ready || Promise.resolve());
    while (!this.stopped) {
      try {
        let from = this.last;
        if (!from) {
          const res = await this.cluster.fetch(`${PATH}?limit=1`, { headers: { Accept: 'application/json' } });
          if (!res.ok) throw new Error(`LIST hops: ${res.status} ${await res.text()}`);
          const list = await res.json();
          this.latest = Number(list.metadata.resourceVersion) || 0;
          from = Math.max(0, this.latest - this.history);
          if (list.items && list.items.length && list.items[0].seq > from + 1) from = list.items[0].seq - 1;
        }
        this.setState('live');
        const again = await this.watch(from);
        if (again === 'relist') this.last = 0;
        backoff = 200;
      } catch (err) {
        if (this.stopped) return;
        console.debug('flow: hops watch:', err);
        this.setState('reconnecting');
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  async watch(from) {
    this.abort = new AbortController();
    const url = `${PATH}?watch=true&resourceVersion=${from}`;
    const res = await this.cluster.fetch(url, { signal: this.abort.signal, headers: { Accept: 'application/json' } });
    if (res.status === 410) {
      this.last = 0;
      return 'relist';
    }
    if (!res.ok) throw new Error(`WATCH hops: ${res.status} ${await res.text()}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return 'resume';
      buf += value;
      let batch = [];
      // Scan the lines in place and cut the buffer once: a chunk of
      // thousands of events must not be copied once per event.
      let start = 0;
      let nl;
      while ((nl = buf.indexOf('\n', start)) >= 0) {
        const line = buf.slice(start, nl);
        start = nl + 1;
        if (!line.trim()) continue;
        const ev = JSON.parse(line);
        if (ev.type === 'ERROR') {
          reader.cancel().catch(() => {});
          if (batch.length) this.onHops(batch);
          return 'relist';
        }
        if (ev.type !== 'ADDED' || !ev.object || ev.object.seq <= this.last) continue;
        this.last = ev.object.seq;
        batch.push(compact(ev.object));
        // A batch from the worker can hold thousands of hops: hand on what
        // is parsed and give the page a turn (pace.js).
        if (due()) {
          this.onHops(batch);
          batch = [];
          await yieldTask();
          if (this.stopped) return 'resume';
        }
      }
      buf = buf.slice(start);
      if (batch.length) this.onHops(batch);
    }
  }
}
