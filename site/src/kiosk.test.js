// node --test: which kiosk.json makes a kiosk.
import test from 'node:test';
import assert from 'node:assert/strict';

if (!globalThis.navigator) globalThis.navigator = { languages: ['en'] };
const { parseConfig } = await import('./kiosk.js');

test('kiosk.json needs a sane idleSeconds', () => {
  assert.deepEqual(parseConfig({ idleSeconds: 600 }), { idleSeconds: 600 });
  assert.deepEqual(parseConfig({ idleSeconds: 60, extra: 1 }), { idleSeconds: 60 });
  for (const bad of [null, 'x', {}, { idleSeconds: 59 }, { idleSeconds: 1.5 }, { idleSeconds: '600' }, { idleSeconds: 10 ** 9 }]) {
    assert.equal(parseConfig(bad), null, JSON.stringify(bad));
  }
});
