import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The project's pinned documents on disk (TAS, PRD, requirements, spec, plan): files named so in
 * the project root or its `docs/` folder. The root is the nearest folder up from `cwd` with a `.git`
 * (else `cwd`).
 */

type PinnedKind = 'tas' | 'prd' | 'requirements' | 'spec' | 'plan';

export interface PinnedDocument {
  readonly kind: PinnedKind;
  readonly path: string;
  readonly text: string;
}

const NAMES: readonly [PinnedKind, RegExp][] = [
  ['tas', /^(tas|technical[-_ ]architecture(?:[-_ ]spec(?:ification)?)?)\.(md|txt)$/i],
  ['prd', /^(prd|product[-_ ]requirements(?:[-_ ]document)?)\.(md|txt)$/i],
  ['requirements', /^requirements\.(md|txt)$/i],
  ['spec', /^spec(ification)?\.(md|txt)$/i],
  ['plan', /^plan\.(md|txt)$/i],
];

/** Largest document read (bytes); a bigger one is cut, and the cut said. */
const MAX_BYTES = 256 * 1024;

export function projectRoot(cwd: string): string {
  let dir = cwd;
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return cwd;
    dir = parent;
  }
}

export function findPinnedDocuments(cwd: string): PinnedDocument[] {
  const root = projectRoot(cwd);
  const docs: PinnedDocument[] = [];
  for (const dir of [root, join(root, 'docs')]) {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const kind = NAMES.find(([, pattern]) => pattern.test(name))?.[0];
      if (!kind || docs.some((d) => d.kind === kind)) continue;
      const path = join(dir, name);
      try {
        if (!statSync(path).isFile()) continue;
        const bytes = readFileSync(path);
        const text = bytes.subarray(0, MAX_BYTES).toString('utf8');
        docs.push({ kind, path, text: bytes.length > MAX_BYTES ? `${text}\n[… cut at ${MAX_BYTES} bytes]` : text });
      } catch {
        // unreadable: not a pinned document
      }
    }
  }
  return docs;
}
