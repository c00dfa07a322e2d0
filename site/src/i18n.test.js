// node --test: every UI string exists in English and Japanese.
import test from 'node:test';
import assert from 'node:assert/strict';

if (!globalThis.navigator) globalThis.navigator = { languages: ['en'] };
const { strings } = await import('./i18n.js');

test('every key is in both languages, and none is empty', () => {
  const en = Object.keys(strings.en);
  // The built-in images' descriptions in English are the catalog's own.
  const ja = Object.keys(strings.ja).filter((k) => !k.startsWith('image.about.'));
  assert.deepEqual(en.filter((k) => !(k in strings.ja)), [], 'missing in ja');
  assert.deepEqual(ja.filter((k) => !(k in strings.en)), [], 'missing in en');
  for (const lang of ['en', 'ja']) {
    for (const [k, v] of Object.entries(strings[lang])) assert.ok(v.trim() !== '', `${lang} ${k} is empty`);
  }
});

test('placeholders agree between the languages', () => {
  const names = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
  for (const [k, v] of Object.entries(strings.en)) {
    if (k in strings.ja) assert.deepEqual(names(strings.ja[k]), names(v), k);
  }
});

test('addStrings takes a module\'s strings only when both languages agree', async () => {
  const { addStrings, t } = await import('./i18n.js');
  assert.throws(() => addStrings({ en: { 'x.test.a': 'A' } }), /x.test.a has no ja text/);
  assert.throws(() => addStrings({ en: { 'x.test.b': '{n} pods' }, ja: { 'x.test.b': 'Pod {m} 個' } }), /placeholders differ/);
  assert.throws(() => addStrings({ en: { 'tagline': 'x' }, ja: { 'tagline': 'x' } }), /defined twice/);
  addStrings({ en: { 'x.test.c': '{n} pods' }, ja: { 'x.test.c': 'Pod {n} 個' } });
  assert.equal(t('x.test.c', { n: 3 }), '3 pods');
});
