// The benchmark's floor: the least any analysis must do — read the file and JSON.parse every line.
// `node bench/floor.mjs FILE` prints the number of lines parsed.
import { readFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/floor.mjs FILE\n');
  process.exit(2);
}
let lines = 0;
for (const line of readFileSync(file, 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  JSON.parse(line);
  lines++;
}
process.stdout.write(`${lines}\n`);
