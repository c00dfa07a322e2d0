// node --test: text measurement and wrapping for the terminal.
import test from 'node:test';
import assert from 'node:assert/strict';
import { width, wrap } from './text.js';

test('width counts East Asian wide characters as two columns', () => {
  assert.equal(width([...'kubectl']), 7);
  assert.equal(width([...'日本語']), 6);
  assert.equal(width([...'Pod の状態']), 10);
});

test('wrap breaks English between words', () => {
  assert.equal(wrap('one two three four', 9), 'one two\r\nthree\r\nfour');
});

test('wrap breaks Japanese between characters and never exceeds the width', () => {
  const text = 'このコンソールは、このタブの Web Worker で動いている本物の kube-apiserver と通信します。';
  for (const line of wrap(text, 20).split('\r\n')) {
    assert.ok(width([...line]) <= 20, `${line} is ${width([...line])} columns`);
  }
  const squash = (s) => s.replaceAll('\r\n', '').replaceAll(' ', '');
  assert.equal(squash(wrap(text, 20)), squash(text), 'no character is lost');
});

test('a word longer than the line stays whole', () => {
  assert.equal(wrap('deployment.apps/web created', 10), 'deployment.apps/web\r\ncreated');
});
