// A tiny informer, the page's copy of client-go's Reflector + Store:
//
//   LIST  /api/v1/pods                       → items, metadata.resourceVersion = R
//   WATCH /api/v1/pods?watch=true&resourceVersion=R
//         {"type":"ADDED","object":{...}}     → put
//         {"type":"MODIFIED","object":{...}}  → put
//         {"type":"DELETED","object":{...}}   → delete
//         {"type":"BOOKMARK","object":{...}}  → only remember its resourceVersion
//         {"type":"ERROR","object":Status}    → e.g. 410 Gone: LIST again
//   the stream ends (timeout)                 → WATCH again from the last resourceVersion
//   a request fails                           → wait (backing off), LIST again
//
// No polling: after the LIST, every change arrives on the watch.

import { due, yieldTask } from './pace.js';

export class Informer {
  /**
   * @param {{fetch: Function}} cluster  anything with a fetch like window.fetch
   * @param {string} path                 a collection, e.g. "/api/v1/pods"
   * @param {(items: Map<string, object>, state: string) => void} onChange
   */
  constructor(cluster, path, onChange) {
    this.cluster = cluster;
    this.path = path;
    this.onChange = onChange;
    this.items = new Map(); // namespace/name → object
    this.state = 'connecting'; // connecting | live | reconnecting
    this.stopped = false;
    this.abort = null;
  }

  static key(obj) {
    const m = obj.metadata || {};
    return m.namespace ? `${m.namespace}/${m.name}` : m.name;
  }

  setState(state) {
    this.state = state;
    this.onChange(this.items, state);
  }

  stop() {
    this.stopped = true;
    if (this.abort) this.abort.abort();
  }

  async run() {
    let backoff = 200;
    while (!this.stopped) {
      try {
        let rv = await this.list();
        this.setState('live');
        backoff = 200;
        for (;;) {
          if (this.stopped) return;
          const next = await this.watch(rv);
          if (next === null) break; // relist
          rv = next;
        }
      } catch (err) {
        if (this.stopped) return;
        console.debug(`informer ${this.path}:`, err);
      }
      this.setState('reconnecting');
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 5000);
    }
  }

  async list() {
    const res = await this.cluster.fetch(this.path, { headers: { Accept: 'application/json' } });
    if (!res.ok) throw new Error(`LIST ${this.path}: ${res.status} ${await res.text()}`);
    const list = await res.json();
    this.items = new Map((list.items || []).map((o) => [Informer.key(o), o]));
    return list.metadata.resourceVersion;
  }

  // watch follows one watch stream. It returns the resourceVersion to resume
  // from when the stream ends, or null when the informer must LIST again.
  async watch(rv) {
    this.abort = new AbortController();
    const sep = this.path.includes('?') ? '&' : '?';
    const url = `${this.path}${sep}watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`;
    const res = await this.cluster.fetch(url, { signal: this.abort.signal, headers: { Accept: 'application/json' } });
    if (res.status === 410) return null;
    if (!res.ok) throw new Error(`WATCH ${url}: ${res.status} ${await res.text()}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return rv;
      buf += value;
      let nl;
      let changed = false;
      // Scan the lines in place and cut the buffer once: a chunk of a
      // hundred pod events must not be copied once per event.
      let start = 0;
      while ((nl = buf.indexOf('\n', start)) >= 0) {
        const line = buf.slice(start, nl).trim();
        start = nl + 1;
        if (!line) continue;
        const ev = JSON.parse(line);
        const obj = ev.object || {};
        if (ev.type === 'ERROR') {
          reader.cancel().catch(() => {});
          return null;
        }
        if (obj.metadata && obj.metadata.resourceVersion) rv = obj.metadata.resourceVersion;
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') {
          this.items.set(Informer.key(obj), obj);
          changed = true;
        } else if (ev.type === 'DELETED') {
          this.items.delete(Informer.key(obj));
          changed = true;
        }
        // A batch from the worker can hold hundreds of events: give the
        // page a turn (pace.js). The panels hear of the change once, at the
        // end of the chunk: each onChange may redraw a thousand rows.
        if (due()) {
          await yieldTask();
          if (this.stopped) return rv;
        }
      }
      buf = buf.slice(start);
      if (changed) this.onChange(this.items, this.state);
    }
  }
}
