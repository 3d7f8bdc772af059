import { sha1 } from '../../io/sha1.js';
import { isRecord, pick, safeJson, sameKind, type JsonObject } from '../shared/json.js';

/**
 * A Claude Code line without its text: what the reader (read.ts, tree.ts) needs of it to find the
 * session tree, the active chain, the turns, their tool ids, types, times and recorded usage, with
 * every text, tool input and output, attachment, image and `toolUseResult` left out. Reading a file
 * whose old lines are skeletons and whose new lines are whole gives the turns, usage and issues of
 * reading it whole; only the old turns' text is missing (a resumed batch row has their counts).
 *
 * Kept as they are: the envelope fields the reader looks at, and `message.id`, `model`, `usage`.
 * A content block keeps its type and tool ids; an assistant line's block also keeps a hash of the
 * whole block, so a response written twice is still counted once (`addContent` compares blocks).
 * Every kept value has the shape the reader tests for: a string stays a string (empty), a record a
 * record, anything else a value of the same kind. test/resume.test.ts reads every real file both ways.
 */

/** Envelope fields copied whole: small, and each one read by the reader or its detection. */
const ENVELOPE = [
  'type',
  'uuid',
  'parentUuid',
  'logicalParentUuid',
  'isSidechain',
  'subtype',
  'timestamp',
  'isCompactSummary',
  'requestId',
  'sessionId',
  'operation',
  'leafUuid',
  'projectHash',
  'microcompactMetadata',
  // A prune's boundary is marked so (not one of the agent's compactions), with or without its fit.
  'devsCtx',
  'devsCtxCalibration',
] as const;
/** Fields whose presence alone is read (detection of other formats' lines). */
const PRESENCE = ['payload', 'role', '$set', '$rewindTo'] as const;

export function claudeCodeSkeleton(value: unknown): unknown {
  if (!isRecord(value)) return null;
  const out = pick(value, ENVELOPE);
  for (const key of PRESENCE) if (key in value) out[key] = null;
  const meta = value['compactMetadata'];
  if (meta !== undefined) out['compactMetadata'] = isRecord(meta) ? pick(meta, ['preTokens', 'trigger']) : null;
  if (typeof value['summary'] === 'string') out['summary'] = '';
  if ('snapshot' in value) out['snapshot'] = isRecord(value['snapshot']) ? {} : null;
  if ('message' in value) out['message'] = messageSkeleton(value['message'], value['type'] === 'assistant');
  return out;
}

function messageSkeleton(message: unknown, assistant: boolean): unknown {
  if (!isRecord(message)) return null;
  const out = pick(message, ['id', 'model']);
  const usage = message['usage'];
  if (usage !== undefined) {
    out['usage'] = isRecord(usage) ? pick(usage, ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens']) : null;
  }
  if ('content' in message) out['content'] = contentSkeleton(message['content'], assistant) as JsonObject[string];
  return out;
}

function contentSkeleton(content: unknown, assistant: boolean): unknown {
  if (typeof content === 'string') return '';
  if (Array.isArray(content)) return content.map((block) => blockSkeleton(block, assistant));
  return sameKind(content);
}

function blockSkeleton(block: unknown, assistant: boolean): unknown {
  if (!isRecord(block)) return null;
  const out: JsonObject = {};
  if (typeof block['type'] === 'string') out['type'] = block['type'];
  if (typeof block['id'] === 'string') out['id'] = block['id'];
  if (typeof block['tool_use_id'] === 'string') out['tool_use_id'] = block['tool_use_id'];
  if (assistant) out['hash'] = sha1(safeJson(block));
  return out;
}
