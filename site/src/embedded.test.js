// node --test: what an embedded kubetab accepts from the page that embeds it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { embedMode, parseRun } from './embedded.js';

test('the embed mode comes from ?embed=', () => {
  assert.equal(embedMode({ search: '' }), '');
  assert.equal(embedMode({ search: '?embed' }), 'console');
  assert.equal(embedMode({ search: '?embed=console' }), 'console');
  assert.equal(embedMode({ search: '?embed=lesson' }), 'lesson');
  assert.equal(embedMode({ search: '?embed=whatever&lang=ja' }), 'console');
});

test('a run message is checked before anything runs', () => {
  assert.deepEqual(parseRun({ kubetab: 'run', id: 1, text: 'kubectl get pods\r\n\n' }), { id: 1, text: 'kubectl get pods' });
  assert.deepEqual(parseRun({ kubetab: 'run', id: 'a', text: 'cat <<EOF\nx\nEOF' }), { id: 'a', text: 'cat <<EOF\nx\nEOF' });
  for (const [msg, want] of [
    [null, /not a kubetab run message/],
    [{ kubetab: 'exec', id: 1, text: 'x' }, /not a kubetab run message/],
    [{ kubetab: 'run', text: 'x' }, /id must be/],
    [{ kubetab: 'run', id: {}, text: 'x' }, /id must be/],
    [{ kubetab: 'run', id: 1, text: '  ' }, /non-empty string/],
    [{ kubetab: 'run', id: 1, text: 42 }, /non-empty string/],
    [{ kubetab: 'run', id: 1, text: 'x'.repeat(9000) }, /longer than 8192/],
  ]) assert.throws(() => parseRun(msg), want);
});
