import { readFileSync } from 'node:fs';
import { parseDocument } from './src/io/jsonl.js';
import { readTranscript } from './src/formats/index.js';
for (const f of process.argv.slice(2)) {
  const t = readTranscript(parseDocument(readFileSync(f), { path: f }));
  console.log('==', f.split('/').slice(-3).join('/'), t.format ?? '');
  let calls = 0, results = 0;
  for (const e of t.entries) {
    const turn = e.turn;
    if (turn.type === 'tool_call' && calls++ < 4) console.log('CALL', JSON.stringify(turn.content.slice(0, 300)), JSON.stringify(Object.keys(e)));
    if (turn.type === 'tool_result' && results++ < 4) console.log('RES', JSON.stringify(turn.content.slice(0, 200)));
  }
}
