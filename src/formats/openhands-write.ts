import type { FormatWriter } from './types.js';

/** Placeholder: the openhands writer is being written. */
export const openhandsWriter: FormatWriter = {
  name: 'openhands',
  write() {
    throw new Error('the openhands writer is not implemented yet');
  },
  validate() {
    return ['the openhands validator is not implemented yet'];
  },
};
