// The page's shared informer cache: one list+watch per collection, however
// many panels look at it, the way client-go's SharedInformerFactory gives
// every controller in kube-controller-manager one informer per resource.
//
//   const off = ctx.cache.subscribe('/api/v1/pods', (items, state) => draw(items));
//   ctx.cache.items('/api/v1/pods')   // the current Map: namespace/name → object
//   off()                              // the last subscriber gone: the watch stops
//
// Subscribers are told at most once per animation frame, however many watch
// events arrived in it (a 3-replica Deployment is dozens of updates), so a
// panel draws once per frame. Watching starts when the cluster is ready.

import { Informer } from './informer.js';

export class Cache {
  /** @param {{fetch: Function, ready: Promise}} cluster */
  constructor(cluster) {
    this.cluster = cluster;
    this.entries = new Map(); // path → {informer, items, state, subs:Set, dirty}
    this.frame = 0;
  }

  /**
   * Call fn(items, state) now (if anything is known) and after every change
   * of the collection at path. Returns the unsubscriber.
   */
  subscribe(path, fn) {
    let e = this.entries.get(path);
    if (!e) {
      e = { items: new Map(), state: 'connecting', subs: new Set(), dirty: false, informer: null };
      e.informer = new Informer(this.cluster, path, (items, state) => {
        e.items = items;
        e.state = state;
        e.dirty = true;
        this.schedule();
      });
      this.entries.set(path, e);
      const ready = this.cluster.ready || Promise.resolve();
      ready.then(() => { if (this.entries.get(path) === e) e.informer.run(); }, () => {});
    }
    e.subs.add(fn);
    fn(e.items, e.state);
    return () => {
      e.subs.delete(fn);
      if (e.subs.size === 0 && this.entries.get(path) === e) {
        e.informer.stop();
        this.entries.delete(path);
      }
    };
  }

  /** The current objects of path (empty when nobody subscribes to it). */
  items(path) {
    const e = this.entries.get(path);
    return e ? e.items : new Map();
  }

  /** The informer state of path: connecting, live or reconnecting. */
  state(path) {
    const e = this.entries.get(path);
    return e ? e.state : 'connecting';
  }

  schedule() {
    if (this.frame) return;
    const flush = () => {
      this.frame = 0;
      for (const e of this.entries.values()) {
        if (!e.dirty) continue;
        e.dirty = false;
        for (const fn of [...e.subs]) fn(e.items, e.state);
      }
    };
    // rAF does not run in a hidden tab; a timer keeps the cache current there.
    this.frame = typeof requestAnimationFrame === 'function' && !(typeof document !== 'undefined' && document.hidden)
      ? requestAnimationFrame(flush) : setTimeout(flush, 50);
  }
}
