// The floor of a batch: the least analysing a directory of transcripts must do — find every .jsonl
// file below it, read it, and JSON.parse every line, one file after another on one thread.
// `node bench/floor-batch.mjs DIR` prints the number of files and lines.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node bench/floor-batch.mjs DIR\n');
  process.exit(2);
}
let files = 0;
let lines = 0;
const walk = (current) => {
  for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(current, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (entry.name.endsWith('.jsonl')) {
      files++;
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        JSON.parse(line);
        lines++;
      }
    }
  }
};
walk(dir);
process.stdout.write(`${files} files, ${lines} lines\n`);
