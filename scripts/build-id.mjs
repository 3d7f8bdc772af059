// Writes dist/build-id.json: a hash of the package version and every built file, so caches of
// finished results (src/io/row-cache.ts) can tell one build from another. Run by `npm run build`.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const dist = 'dist';
const out = join(dist, 'build-id.json');
const hash = createHash('sha256');
hash.update(JSON.parse(readFileSync('package.json', 'utf8')).version);
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    // A code cache is made from the bundle (hashed here) and differs from build to build.
    else if (path !== out && !path.endsWith('.map') && !path.endsWith('.d.ts') && !path.endsWith('.v8cache'))
      hash.update(`\0${relative(dist, path)}\0`).update(readFileSync(path));
  }
};
walk(dist);
writeFileSync(out, `${JSON.stringify({ id: hash.digest('base64url') })}\n`);
