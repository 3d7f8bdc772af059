import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seeded } from './prng.js';

/** One generated session: where it is and the span of its turns' timestamps. */
export interface GeneratedSession {
  /** Relative to the batch directory. */
  readonly file: string;
  readonly project: string;
  readonly turns: number;
  readonly first: number;
  readonly last: number;
}

const WORDS =
  'the export stream rows header tax total invoice test build parse cache window token budget prune summary agent model error retry config file path module function record field key read write check'.split(
    ' ',
  );

/**
 * Writes `sessions` small native transcripts spread over `projects` folders (round robin), each with
 * a seeded number of turns and a turn every minute from `start + i * stepMs`. Fast: a few hundred files
 * in well under a second.
 */
export function writeBatch(options: {
  readonly sessions: number;
  readonly projects: readonly string[];
  readonly seed: number;
  readonly start: number;
  readonly stepMs: number;
  readonly dir?: string;
  /** Most turns a session may have (default 40). */
  readonly maxTurns?: number;
}): { dir: string; sessions: GeneratedSession[] } {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'devs-ctx-batch-'));
  const rng = seeded(options.seed);
  const int = (min: number, max: number): number => min + Math.floor(rng() * (max - min + 1));
  const text = (words: number): string => Array.from({ length: words }, () => WORDS[int(0, WORDS.length - 1)]).join(' ');
  const sessions: GeneratedSession[] = [];
  for (const project of options.projects) mkdirSync(join(dir, project), { recursive: true });
  for (let i = 0; i < options.sessions; i++) {
    const project = options.projects[i % options.projects.length] ?? '.';
    const file = join(project, `session-${String(i).padStart(4, '0')}.jsonl`);
    const turns = int(3, options.maxTurns ?? 40);
    const first = options.start + i * options.stepMs;
    const lines: string[] = [];
    for (let t = 0; t < turns; t++) {
      const role = t === 0 ? 'system' : t % 2 === 1 ? 'user' : 'assistant';
      const type = t === 0 ? 'system' : 'message';
      // A few sessions are much larger, so sorting and the limits have something to tell apart.
      const words = i % 17 === 5 && t === 2 ? 3_000 : int(5, 80);
      lines.push(JSON.stringify({ id: `s${i}-t${t}`, role, type, content: text(words), timestamp: new Date(first + t * 60_000).toISOString() }));
    }
    writeFileSync(join(dir, file), `${lines.join('\n')}\n`);
    sessions.push({ file, project, turns, first, last: first + (turns - 1) * 60_000 });
  }
  return { dir, sessions };
}
