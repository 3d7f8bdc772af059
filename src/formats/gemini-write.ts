import type { FormatWriter } from './types.js';

/** Placeholder: the gemini writer is being written. */
export const geminiWriter: FormatWriter = {
  name: 'gemini',
  write() {
    throw new Error('the gemini writer is not implemented yet');
  },
  validate() {
    return ['the gemini validator is not implemented yet'];
  },
};
