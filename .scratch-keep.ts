import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { parseDocument } from './src/io/jsonl.js';
import { readTranscript } from './src/formats/index.js';
import { repeatedIdentifiers } from './bench/summary.js';
for (const f of process.argv.slice(2)) {
  const turns = readTranscript(parseDocument(readFileSync(f), { path: f })).entries.map((e) => e.turn);
  const ids = repeatedIdentifiers(turns.filter((t) => (t.role === 'user' || t.role === 'assistant') && t.type === 'message').map((t) => t.content));
  const r = spawnSync(process.execPath, ['bin/devs-ctx.js', 'prune', f, '--force', '--target', '1', '--no-archive', '--no-cache', '--dry-run', '--json'], { encoding: 'utf8', maxBuffer: 1e9 });
  const j = JSON.parse(r.stdout);
  const text: string = j.summary?.text ?? '';
  const kept = ids.filter((id) => text.includes(id));
  console.log(f.split('/').slice(-2)[0], 'ids', ids.length, 'kept', kept.length, 'tokens', j.summary?.tokens, 'dropped', j.dropped.tokens, 'missing', JSON.stringify(ids.filter((id) => !text.includes(id)).slice(0, 8)));
}
