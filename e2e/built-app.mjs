// What the built service worker (dist/sw.js) says the app is, read by the tests themselves (not by
// the app's Rust): its cache's name, every file of the app (APP_FILES) and the files a
// participant's page never loads with their declared SHA-256 (LAZY_FILES, issue 25), and every
// other file but index.html with its declared SHA-256 (DECLARED_FILES).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** `{ cache, files, lazy: [{ file, sha256 }], declared: [{ file, sha256 }] }` of the sw.js in `dist`. */
export async function serviceWorkerLists(dist) {
  const sw = await readFile(join(dist, 'sw.js'), 'utf8');
  const cache = sw.match(/const CACHE = '([^']+)';/)[1];
  const files = JSON.parse(sw.match(/const APP_FILES = (\[[^\]]*\]);/)[1].replace(/'/g, '"').replace(/,\s*\]/, ']'));
  const list = (name) => {
    const entries = sw.match(new RegExp(`const ${name} = \\{([^}]*)\\};`));
    if (!entries) throw new Error(`${dist}/sw.js declares no ${name}`);
    return [...entries[1].matchAll(/'([^']+)': '([0-9a-f]{64})'/g)].map(([, file, sha256]) => ({ file, sha256 }));
  };
  return { cache, files, lazy: list('LAZY_FILES'), declared: list('DECLARED_FILES') };
}
