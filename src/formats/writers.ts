import { claudeCodeWriter } from './claude-code/write.js';
import { codexWriter } from './codex/write.js';
import { devsWriter } from './devs/write.js';
import { geminiWriter } from './gemini/write.js';
import { openaiChatWriter } from './openai-chat/write.js';
import { openhandsWriter } from './openhands/write.js';
import type { FormatName, FormatWriter } from './types.js';

/** Every format's writer (the other half of its adapter): edit → lines. */
export const WRITERS: Readonly<Record<FormatName, FormatWriter>> = {
  devs: devsWriter,
  'claude-code': claudeCodeWriter,
  codex: codexWriter,
  gemini: geminiWriter,
  'openai-chat': openaiChatWriter,
  openhands: openhandsWriter,
};

export function writerFor(name: FormatName): FormatWriter {
  return WRITERS[name];
}
