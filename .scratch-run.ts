import { readFileSync } from 'node:fs';
import { parseDocument } from './src/io/jsonl.js';
import { readTranscript } from './src/formats/index.js';
import { repeatedIdentifiers } from './bench/summary.js';
const doc = parseDocument(readFileSync('/tmp/sumdev/span.jsonl'), { path: 'span.jsonl' });
const turns = readTranscript(doc).entries.map((e) => e.turn);
const ids = repeatedIdentifiers(turns.filter((t) => (t.role === 'user' || t.role === 'assistant') && t.type === 'message').map((t) => t.content));
console.log(ids);
for (const t of turns) console.log(t.id.slice(0,8), t.role, t.type, JSON.stringify(t.content.slice(0, 230)));
