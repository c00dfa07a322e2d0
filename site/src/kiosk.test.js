// node --test: which data-kiosk-idle makes a kiosk.
import test from 'node:test';
import assert from 'node:assert/strict';

if (!globalThis.navigator) globalThis.navigator = { languages: ['en'] };
const { parseConfig } = await import('./kiosk.js');

test('data-kiosk-idle needs a sane number of seconds', () => {
  assert.deepEqual(parseConfig('600'), { idleSeconds: 600 });
  assert.deepEqual(parseConfig('60'), { idleSeconds: 60 });
  for (const bad of [undefined, null, '', 'x', '59', '1.5', '-600', ' 600', String(10 ** 9)]) {
    assert.equal(parseConfig(bad), null, String(bad));
  }
});
