import type { FormatWriter } from './types.js';

/** Placeholder: the openai-chat writer is being written. */
export const openaiChatWriter: FormatWriter = {
  name: 'openai-chat',
  write() {
    throw new Error('the openai-chat writer is not implemented yet');
  },
  validate() {
    return ['the openai-chat validator is not implemented yet'];
  },
};
