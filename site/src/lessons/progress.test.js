// node --test: the course progress kept in localStorage.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Progress } from './progress.js';

class MemStorage {
  constructor(init = {}) { this.m = new Map(Object.entries(init)); }
  getItem(k) { return this.m.has(k) ? this.m.get(k) : null; }
  setItem(k, v) { this.m.set(k, String(v)); }
}

test('progress survives a new Progress on the same storage (a reload)', () => {
  const st = new MemStorage();
  const p = new Progress(st);
  p.markSolved('02-first', 2);
  p.markSolved('02-first', 1);
  p.markSolved('02-first', 2);
  const again = new Progress(st);
  assert.deepEqual([...again.solved('02-first')], [1, 2]);
  assert.equal(again.complete('02-first', 2), true);
  assert.equal(again.complete('02-first', 3), false);
  assert.equal(again.complete('other', 0), false);
});

test('clear forgets one lesson only', () => {
  const st = new MemStorage();
  const p = new Progress(st);
  p.markSolved('a', 1);
  p.markSolved('b', 1);
  let changes = 0;
  p.onChange(() => changes++);
  p.clear('a');
  p.clear('missing');
  assert.equal(changes, 1);
  const again = new Progress(st);
  assert.equal(again.solved('a').size, 0);
  assert.deepEqual([...again.solved('b')], [1]);
});

test('a corrupt entry starts over', () => {
  for (const bad of ['{', '[1,2]', '{"a": {"solved": "x"}}', 'null']) {
    const p = new Progress(new MemStorage({ 'kubetab.lessons': bad }));
    assert.equal(p.solved('a').size, 0, bad);
  }
});
