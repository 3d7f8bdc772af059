import type { FormatWriter } from './types.js';

/** Placeholder: the claude-code writer is being written. */
export const claudeCodeWriter: FormatWriter = {
  name: 'claude-code',
  write() {
    throw new Error('the claude-code writer is not implemented yet');
  },
  validate() {
    return ['the claude-code validator is not implemented yet'];
  },
};
