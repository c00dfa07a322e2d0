// A learner's progress through the course: which steps of which lesson are
// solved, kept in localStorage so that it survives a reload (the cluster
// does not: a reload starts a fresh one).
//
//   localStorage['kubetab.lessons'] = {"02-first-deployment": {"solved": [1, 2]}, ...}
//
// Progress belongs to the lesson, not to a language: switching language
// keeps it.

const KEY = 'kubetab.lessons';

export class Progress {
  /** @param {Storage|null} storage localStorage, or null to keep it in memory only */
  constructor(storage) {
    this.storage = storage;
    this.data = {};
    try {
      const d = JSON.parse((storage && storage.getItem(KEY)) || '{}');
      if (d && typeof d === 'object' && !Array.isArray(d)) this.data = d;
    } catch { /* a corrupt entry starts over */ }
    this.listeners = new Set();
  }

  /** The solved step numbers of a lesson, as a Set. */
  solved(slug) {
    const s = this.data[slug] && this.data[slug].solved;
    return new Set(Array.isArray(s) ? s.filter((n) => Number.isInteger(n)) : []);
  }

  /** Whether every one of a lesson's steps (1..steps) is solved. */
  complete(slug, steps) {
    const s = this.solved(slug);
    for (let n = 1; n <= steps; n++) if (!s.has(n)) return false;
    return steps > 0;
  }

  markSolved(slug, n) {
    const s = this.solved(slug);
    if (s.has(n)) return;
    s.add(n);
    this.data[slug] = { ...this.data[slug], solved: [...s].sort((a, b) => a - b) };
    this.save();
  }

  /** Forget a lesson's progress (Reset lesson). */
  clear(slug) {
    if (!(slug in this.data)) return;
    delete this.data[slug];
    this.save();
  }

  /** Call fn(slug) whenever a lesson's progress changes. Returns a remover. */
  onChange(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  save() {
    try { if (this.storage) this.storage.setItem(KEY, JSON.stringify(this.data)); } catch { /* storage may be full or disabled */ }
    for (const fn of this.listeners) fn();
  }
}
