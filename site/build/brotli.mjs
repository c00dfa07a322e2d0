// brotli.mjs QUALITY LARGE_QUALITY FILE... writes FILE.br beside each FILE
// (LARGE_QUALITY for files over 4 MB: kubetab.wasm at q11 takes minutes), with Node's
// zlib (the C brotli library; the pure-Go port takes minutes per quality
// step on kubetab.wasm). site/build -finish runs it; Node is already a
// build tool (npm ci).
import fs from 'node:fs';
import zlib from 'node:zlib';

const [quality, largeQuality, ...files] = process.argv.slice(2);
const { BROTLI_PARAM_QUALITY, BROTLI_PARAM_LGWIN, BROTLI_PARAM_SIZE_HINT, BROTLI_PARAM_MODE, BROTLI_MODE_TEXT, BROTLI_MODE_GENERIC } = zlib.constants;
await Promise.all(files.map(async (file) => {
  const data = await fs.promises.readFile(file);
  const br = await new Promise((resolve, reject) => zlib.brotliCompress(data, {
    params: {
      [BROTLI_PARAM_QUALITY]: Number(data.length > 4 << 20 ? largeQuality : quality),
      [BROTLI_PARAM_LGWIN]: 24,
      [BROTLI_PARAM_SIZE_HINT]: data.length,
      [BROTLI_PARAM_MODE]: file.endsWith('.wasm') ? BROTLI_MODE_GENERIC : BROTLI_MODE_TEXT,
    },
  }, (err, out) => (err ? reject(err) : resolve(out))));
  await fs.promises.writeFile(`${file}.br`, br);
}));
