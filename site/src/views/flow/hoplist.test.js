// Tests for the hop list's scroll bookkeeping, with a stand-in box: the
// list keeps the newest hop in sight, and a learner's scroll wins over a
// follow that is still waiting for the list to grow.
import { test } from 'node:test';
import assert from 'node:assert/strict';

globalThis.ResizeObserver ??= class { observe() {} };
if (!globalThis.navigator) globalThis.navigator = { languages: ['en'] };
const { HopList, ROW_H } = await import('./hoplist.js');

function fakeBox() {
  const handlers = {};
  return {
    scrollTop: 0,
    style: { setProperty() {} },
    addEventListener(ev, fn) { handlers[ev] = fn; },
    scroll(to) { this.scrollTop = to; handlers.scroll(); },
  };
}

test('a learner scrolling up is not pulled back by a pending follow', () => {
  const box = fakeBox();
  const list = { style: {} };
  const l = new HopList(box, list, () => []);
  l.boxH = 10 * ROW_H;
  l.height = 20 * ROW_H;
  // Follow the 30th hop: the list is only 20 rows high as written, so the
  // scroll waits for the list to grow.
  l.follow(29);
  l.applyScroll();
  assert.equal(box.scrollTop, 10 * ROW_H);
  assert.ok(l.scrollPending(), 'the follow past the list waits a frame');
  // The learner scrolls to the top before the next frame.
  box.scroll(0);
  assert.ok(l.readScroll(), 'the learner scrolled');
  l.height = 40 * ROW_H;
  l.applyScroll();
  assert.equal(box.scrollTop, 0, 'the scroll went back to the followed hop');
  assert.ok(!l.scrollPending());
});

test('our own scroll is not taken for the learner\'s', () => {
  const box = fakeBox();
  const l = new HopList(box, { style: {} }, () => []);
  l.boxH = 10 * ROW_H;
  l.height = 40 * ROW_H;
  l.follow(29);
  l.applyScroll();
  box.scroll(box.scrollTop);
  assert.equal(l.readScroll(), false);
});
