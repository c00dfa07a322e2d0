// The flow view's list of hops, virtualised: the window keeps thousands of
// hops, the list box shows a dozen, and only those (and a few either side)
// are in the DOM. The list is one tall box (a row ROW_H high for every hop,
// flow.css fixes the height) with the rows in sight placed in it by their
// index, so scrolling and following the newest hop are arithmetic:
//
//   read   at the start of a frame, only after a scroll event, before
//          anything is written
//   write  the scroll first, while layout is clean, then the rows
//
// and nothing reads layout after a write in the same frame. A row is
// written only when the hop it shows, or its state (played, current,
// selected), changes.
//
// Hooks for tests: each row is li[data-seq=SEQ]; rows() lists every listed
// hop's text, in sight or not.

import { t } from '../../i18n.js';
import { kindOf, stageOf, arrowLabel } from './hops.js';

export const ROW_H = 34;
const OVERSCAN = 6;

/** A hop's second line in the list: "create pods default/web-…". */
export function rowText(hp) {
  let s = arrowLabel(hp);
  if (hp.type !== 'write' && hp.name) s += ` ${hp.ns ? `${hp.ns}/` : ''}${hp.name}`;
  if (hp.type === 'write') s += ` ${hp.key}`;
  if (hp.type === 'call' && hp.detail) s += ` · ${hp.detail}`;
  return s;
}

/** A hop's first line: who to whom. */
export function rowWho(hp) {
  return `${hp.from} → ${hp.to || (hp.type === 'decision' ? '⚖' : '')}`;
}

export class HopList {
  /**
   * @param {HTMLElement} box   the scrolling box
   * @param {HTMLElement} list  the <ol> inside it
   * @param {() => object[]} hops  the listed hops (HopWindow.vis), oldest first
   */
  constructor(box, list, hops) {
    this.box = box;
    this.list = list;
    this.hops = hops;
    this.slots = new Map(); // seq → {li, n, who, what, hop, top, cls}
    this.spare = []; // rows out of sight, to reuse
    this.height = -1; // the list's height as written
    this.boxRows = -1; // the rows' height the box is given (--rows-h)
    this.scrollTop = 0; // the box's scroll as last read or written
    this.want = -1; // the scroll to write at the next applyScroll
    this.scrolled = false; // a scroll event came since the last read
    this.boxH = 240;
    this.epoch = 0; // bumped when the hops were numbered again: every row rewrites
    new ResizeObserver(([e]) => {
      const h = e.contentRect.height;
      if (h && h !== this.boxH) {
        this.boxH = h;
        this.onResize();
      }
    }).observe(box);
    this.onResize = () => {};
    box.addEventListener('scroll', () => {
      this.scrolled = true;
      this.onScroll();
    }, { passive: true });
    this.onScroll = () => {};
  }

  /**
   * At the start of a frame, before anything is written (layout is clean,
   * the read costs nothing): after a scroll event, where the box is now.
   * True when it is not where we put it: the learner scrolled.
   */
  readScroll() {
    if (!this.scrolled) return false;
    this.scrolled = false;
    const at = this.box.scrollTop;
    if (Math.abs(at - this.scrollTop) < 1) return false;
    this.scrollTop = at;
    // The learner's scroll wins over a follow still waiting to be written
    // (one past the list's height waits a frame for the list to grow).
    this.want = -1;
    return true;
  }

  /** Is the row of index i in sight (as last read or written)? */
  inSight(i) {
    const top = i * ROW_H;
    return top + ROW_H > this.scrollTop && top < this.scrollTop + this.boxH;
  }

  /** Keep the hop at index i in sight (when it is not). */
  follow(i) {
    if (i < 0) return;
    const top = i * ROW_H;
    const bottom = top + ROW_H;
    const at = this.want >= 0 ? this.want : this.scrollTop;
    if (top < at + 20) this.want = Math.max(0, top - 20);
    else if (bottom > at + this.boxH - 8) this.want = Math.ceil(bottom - this.boxH + 8);
  }

  /** The oldest k hops left the window: what was in sight moves up k rows. */
  trimmed(k) {
    const at = this.want >= 0 ? this.want : this.scrollTop;
    this.want = Math.max(0, at - k * ROW_H);
  }

  /** The hops were numbered again (filter, follow, clear): every row rewrites. */
  reset() {
    this.epoch++;
  }

  scrollPending() {
    return this.want >= 0;
  }

  /**
   * Write the wanted scroll. Called before any other write of the frame, so
   * the box's layout is clean. The list cannot scroll past its height as
   * last written; a scroll beyond it waits for the next frame.
   */
  applyScroll() {
    if (this.want < 0) return;
    const max = Math.max(0, this.height - Math.round(this.boxH));
    const to = Math.round(Math.min(this.want, max));
    if (to !== this.scrollTop) {
      this.box.scrollTop = to;
      this.scrollTop = to;
    }
    if (this.want <= max) this.want = -1;
  }

  /** Draw the rows in sight: cursor is the index of the newest drawn hop. */
  render(cursor, selected) {
    const hops = this.hops();
    const n = hops.length;
    const height = n * ROW_H;
    if (height !== this.height) {
      this.height = height;
      this.list.style.height = `${height}px`;
      // The box is as high as its first dozen rows (flow.css caps it), so
      // it stops changing size once it is full: rows written in it lay out
      // the box alone.
      const boxRows = Math.min(n, 12) * ROW_H;
      if (boxRows !== this.boxRows) {
        this.boxRows = boxRows;
        this.box.style.setProperty('--rows-h', `${boxRows}px`);
      }
    }
    const first = Math.max(0, Math.floor(this.scrollTop / ROW_H) - OVERSCAN);
    const last = Math.min(n, Math.ceil((this.scrollTop + this.boxH) / ROW_H) + OVERSCAN);
    const keep = new Set();
    for (let i = first; i < last; i++) keep.add(hops[i].seq);
    for (const [seq, s] of this.slots) {
      if (!keep.has(seq)) {
        this.slots.delete(seq);
        this.spare.push(s);
      }
    }
    const fresh = [];
    for (let i = first; i < last; i++) {
      const hp = hops[i];
      let s = this.slots.get(hp.seq);
      if (!s) {
        s = this.spare.pop() || this.make();
        s.hop = null;
        this.slots.set(hp.seq, s);
        if (!s.li.isConnected) fresh.push(s.li);
      }
      if (s.hop !== hp || s.epoch !== this.epoch) this.fill(s, hp);
      const top = i * ROW_H;
      if (s.top !== top) {
        s.top = top;
        s.li.style.transform = `translateY(${top}px)`;
      }
      let cls = `k-${kindOf(hp)}`;
      if (i <= cursor) cls += ' played';
      if (i === cursor) cls += ' current';
      if (hp.seq === selected) cls += ' selected';
      if (s.cls !== cls) s.li.className = s.cls = cls;
    }
    // Rows no longer in sight leave the DOM (a few are kept to reuse).
    for (const s of this.spare) if (s.li.isConnected) s.li.remove();
    if (this.spare.length > 4 * OVERSCAN) this.spare.length = 4 * OVERSCAN;
    if (fresh.length) this.list.append(...fresh);
  }

  make() {
    const li = document.createElement('li');
    const n = document.createElement('span');
    n.className = 'n';
    const who = document.createElement('span');
    who.className = 'who';
    const what = document.createElement('span');
    what.className = 'what';
    li.append(n, who, what);
    return { li, n, who, what, hop: null, top: -1, cls: '', epoch: -1 };
  }

  fill(s, hp) {
    s.hop = hp;
    s.epoch = this.epoch;
    s.li.dataset.seq = String(hp.seq);
    s.n.textContent = String(hp.n);
    s.who.textContent = rowWho(hp);
    s.what.textContent = rowText(hp);
    s.li.title = t(`flow.stage.${stageOf(hp)}`);
  }

  /** The language changed: the rows' titles follow. */
  relabel() {
    for (const s of this.slots.values()) if (s.hop) s.li.title = t(`flow.stage.${stageOf(s.hop)}`);
  }

  /** For tests: every listed hop as "who what", in order, in sight or not. */
  rows() {
    return this.hops().map((hp) => `${rowWho(hp)} ${rowText(hp)}`);
  }

  /** For tests and for a click on the diagram: bring the hop seq's row into sight. */
  reveal(index) {
    if (index < 0) return;
    this.want = -1;
    this.follow(index);
  }
}
