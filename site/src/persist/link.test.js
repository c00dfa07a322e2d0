import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkPayload, linkURL } from './link.js';

test('linkPayload reads #cluster= and nothing else', () => {
  for (const [hash, want] of [
    ['#cluster=1.abc-_', '1.abc-_'],
    ['#cluster=', ''],
    ['', null],
    ['#/lessons/01-first', null],
    ['#cluster=1.a b', null],
    ['#cluster=1.a&x=2', null],
    ['#clusters=1.a', null],
  ]) assert.equal(linkPayload(hash), want, hash);
});

test('linkURL replaces the fragment and round-trips', () => {
  const u = linkURL('http://127.0.0.1:8080/kubetab/?q=1#/lessons/x', '1.AbC_-');
  assert.equal(u, 'http://127.0.0.1:8080/kubetab/?q=1#cluster=1.AbC_-');
  assert.equal(linkPayload(new URL(u).hash), '1.AbC_-');
});
