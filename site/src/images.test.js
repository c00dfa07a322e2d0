// node --test: the Images panel's logic (default name:tag from a file name,
// one row per module, descriptions).
import test from 'node:test';
import assert from 'node:assert/strict';
import { refFromFileName, imageRows, describe } from './images.js';
import { formatBytes } from './text.js';

test('a file name becomes a valid image name, tag latest', () => {
  const cases = {
    'myapp.wasm': 'myapp',
    'MyApp.WASM': 'myapp',
    'hello-2.0.wasm': 'hello-2.0',
    'My App (final).wasm': 'my-app-final',
    'a..b__c.wasm': 'a-b-c',
    '_x_.wasm': 'x',
    'C:\\fakepath\\tool.wasm': 'tool',
    'アプリ.wasm': 'myimage',
    'noext': 'noext',
  };
  for (const [file, name] of Object.entries(cases)) {
    assert.deepEqual(refFromFileName(file), { name, tag: 'latest' }, file);
  }
});

const img = (ref, digest, builtin = true, about = `about ${ref}`) => ({ ref, digest, size: 2048, about, builtin });

test('tags of the same module are one row, latest last', () => {
  const rows = imageRows([
    img('hello:1.0', 'sha256:a'), img('hello:2.0', 'sha256:b'), img('hello:latest', 'sha256:a'),
    img('cpu:1.0', 'sha256:c'), img('cpu:latest', 'sha256:c'),
    img('mine:latest', 'sha256:a', false), img('mine:zz', 'sha256:d', false),
  ]);
  assert.deepEqual(rows.map((r) => [r.ref, r.tags]), [
    ['cpu:1.0', ['1.0', 'latest']],
    ['hello:1.0', ['1.0', 'latest']],
    ['hello:2.0', ['2.0']],
    ['mine:zz', ['zz']],
    ['mine:latest', ['latest']],
  ]);
  assert.equal(rows[1].about, 'about hello:1.0');
});

test('the versioned tag gives the row its line even when latest comes first', () => {
  const [row] = imageRows([img('x:latest', 'sha256:a', true, 'alias'), img('x:1.0', 'sha256:a', true, 'the real line')]);
  assert.equal(row.about, 'the real line');
});

test('describe: translated when the language has the line, else the catalog\'s own', () => {
  const ja = { 'image.about.hello:1.0': '挨拶する', 'images.yours': 'あなたが追加 ({size})' };
  const t = (key, vars = {}) => (ja[key] ?? key).replace(/\{(\w+)\}/g, (_, k) => vars[k]);
  const [cpu, hello, mine] = imageRows([img('hello:1.0', 'sha256:a'), img('cpu:1.0', 'sha256:c'), img('mine:latest', 'sha256:d', false)]);
  assert.equal(describe(hello, t, formatBytes), '挨拶する');
  assert.equal(describe(cpu, t, formatBytes), 'about cpu:1.0');
  assert.equal(describe(mine, t, formatBytes), 'あなたが追加 (2.0 KB)');
});

test('formatBytes', () => {
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(14540), '14.2 KB');
  assert.equal(formatBytes(8 * 1024 * 1024 + 1), '8.0 MB');
});

test('imageRows: an alias tag shows the line of the version it names', () => {
  const [row] = imageRows([
    img('busybox:1.36', 'sha256:b', true, 'the same image (and digest) as busybox:1.36.1'),
    img('busybox:1.36.1', 'sha256:b', true, 'BusyBox-style userland'),
    img('busybox:latest', 'sha256:b', true, 'the same image; latest'),
  ]);
  assert.deepEqual(row.tags, ['1.36.1', '1.36', 'latest']);
  assert.equal(row.ref, 'busybox:1.36.1');
  assert.equal(row.about, 'BusyBox-style userland');
});
