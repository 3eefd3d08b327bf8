// Precompress the built app (scripts/build-web.sh, last step; issue 25): beside every text or
// WebAssembly file F of the directory, F.br (Brotli, quality 11) and F.gz (gzip, level 9), each
// only when it is smaller than F. The collector serves them to browsers that accept them
// (tower-http's ServeDir, crates/server/src/web.rs); the files themselves stay as built, so the
// build digest (orthomask_survey::app_build) is of what the page runs.
//
//   node scripts/precompress.mjs DIR
import { readdir, readFile, writeFile, rm } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.json', '.webmanifest', '.svg', '.txt', '.csv']);
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/precompress.mjs DIR');
  process.exit(2);
}
let before = 0;
let after = 0;
for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !COMPRESSIBLE.has(extname(entry.name))) continue;
  const path = join(entry.parentPath ?? entry.path, entry.name);
  const data = await readFile(path);
  const variants = [
    ['.br', brotliCompressSync(data, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_MAX_WINDOW_BITS,
        [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      },
    })],
    ['.gz', gzipSync(data, { level: constants.Z_BEST_COMPRESSION })],
  ];
  before += data.length;
  let smallest = data.length;
  for (const [suffix, packed] of variants) {
    if (packed.length < data.length) {
      await writeFile(path + suffix, packed);
      smallest = Math.min(smallest, packed.length);
    } else {
      await rm(path + suffix, { force: true });
    }
  }
  after += smallest;
}
console.log(`precompressed: ${before} bytes of text and WebAssembly, ${after} as the smallest encodings`);
