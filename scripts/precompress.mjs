// Writes `<file>.br` and `<file>.gz` beside each file given (the wasm modules): at build time,
// with node:zlib at maximum effort, so a static server can send them as they are (Content-Encoding)
// instead of compressing 3 MB of wasm on each request or not at all. Prints each size.
import fs from 'node:fs';
import zlib from 'node:zlib';

for (const file of process.argv.slice(2)) {
  const raw = fs.readFileSync(file);
  const br = zlib.brotliCompressSync(raw, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [zlib.constants.BROTLI_PARAM_LGWIN]: zlib.constants.BROTLI_MAX_WINDOW_BITS,
    },
  });
  const gz = zlib.gzipSync(raw, { level: zlib.constants.Z_BEST_COMPRESSION });
  fs.writeFileSync(`${file}.br`, br);
  fs.writeFileSync(`${file}.gz`, gz);
  console.error(`precompress: ${file} ${raw.length} bytes, gzip ${gz.length}, brotli ${br.length}`);
}
