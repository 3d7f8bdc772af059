import type { FormatWriter } from './types.js';

/** Placeholder: the devs writer is being written. */
export const devsWriter: FormatWriter = {
  name: 'devs',
  write() {
    throw new Error('the devs writer is not implemented yet');
  },
  validate() {
    return ['the devs validator is not implemented yet'];
  },
};
