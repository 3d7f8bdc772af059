import { isDeepStrictEqual } from 'node:util';
import { findNodeAtLocation, parseTree, stripComments } from 'jsonc-parser';
import type { JSONPath, Node } from 'jsonc-parser';

/**
 * A JSON settings file changed the way a person would change it: only the values that change are
 * touched, in the text as it is. Everything else keeps its bytes: comments (where the file's reader
 * allows them), the file's own layout, numbers too long for a double (`12345678901234567890`),
 * `1e3`, `\u00e9` escapes, CRLF line ends. Added values take the file's indent and line end.
 */

export interface JsonTextOptions {
  /** Whether `//` and `/* *\/` comments are allowed (Gemini CLI's settings; Claude Code and Codex read strict JSON). */
  readonly comments: boolean;
}

/**
 * The value of a JSON text as the agent reads it: `JSON.parse`, after blanking comments when they
 * are allowed (Gemini CLI strips them, then parses). Throws JSON.parse's SyntaxError.
 */
export function readJsonText(text: string, options: JsonTextOptions): unknown {
  return JSON.parse(options.comments ? stripComments(text, ' ') : text);
}

/**
 * `text` edited so that it holds `to`: properties and array items devs-ctx added or took out, each
 * written or removed in place. Arrays change by items taken out and items appended (what merging
 * hooks does); any other change replaces the value. Undefined when the edited text would not read
 * back as `to` (a key written twice, say): the caller decides what to do then.
 */
export function editJsonText(text: string, to: unknown, options: JsonTextOptions): string | undefined {
  const style = styleOf(text);
  let out = text;
  const apply = (edit: (root: Node) => string): void => {
    const root = parseTree(out, [], { disallowComments: !options.comments, allowEmptyContent: true });
    if (root) out = edit(root);
  };
  const from = readJsonText(text, options);
  if (!isRecord(from) || !isRecord(to)) return undefined;
  try {
    diff([], from, to, {
      set: (path, value) => apply((root) => replaceAt(out, nodeAt(root, path), value, style)),
      add: (path, value) => apply((root) => appendTo(out, nodeAt(root, path.slice(0, -1)), path.at(-1) as string | number, value, style)),
      remove: (path) => apply((root) => removeAt(out, nodeAt(root, path))),
    });
    return isDeepStrictEqual(readJsonText(out, options), to) ? out : undefined;
  } catch {
    // A value the text does not hold where the parsed settings have it (a key written twice): not edited here.
    return undefined;
  }
}

interface Edits {
  set(path: JSONPath, value: unknown): void;
  /** A new property (path ends in its key) or a new last item (path ends in -1). */
  add(path: JSONPath, value: unknown): void;
  remove(path: JSONPath): void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The edits that make `from` into `to`, depth first; removals of array items from the last one back. */
function diff(path: JSONPath, from: unknown, to: unknown, edits: Edits): void {
  if (isDeepStrictEqual(from, to)) return;
  if (isRecord(from) && isRecord(to)) {
    for (const key of Object.keys(from)) if (!Object.hasOwn(to, key)) edits.remove([...path, key]);
    for (const [key, value] of Object.entries(to)) {
      if (Object.hasOwn(from, key)) diff([...path, key], from[key], value, edits);
      else edits.add([...path, key], value);
    }
    return;
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    // The items of `from` that stay, in order, are the start of `to`; the rest of `to` is appended.
    const gone: number[] = [];
    let next = 0;
    for (let i = 0; i < from.length; i++) {
      if (next < to.length && isDeepStrictEqual(from[i], to[next])) next++;
      else gone.push(i);
    }
    for (const i of gone.reverse()) edits.remove([...path, i]);
    for (const value of to.slice(next)) edits.add([...path, -1], value);
    return;
  }
  edits.set(path, to);
}

function nodeAt(root: Node, path: JSONPath): Node {
  const node = path.length === 0 ? root : findNodeAtLocation(root, path);
  if (!node) throw new Error(`no JSON value at ${path.join('.')}`);
  return node;
}

/** How the file is written: its indent unit (its first indented line's, else two spaces), its line end, and whether it is all on one line. */
interface Style {
  readonly unit: string;
  readonly eol: string;
  /** One line (minified): new values are written without white space. */
  readonly compact: boolean;
}

function styleOf(text: string): Style {
  const indent = /^[ \t]+(?=\S)/m.exec(text)?.[0];
  return {
    unit: indent?.includes('\t') ? '\t' : ' '.repeat(indent?.length ?? 2),
    eol: text.includes('\r\n') ? '\r\n' : '\n',
    compact: !text.trimEnd().includes('\n'),
  };
}

/** Where the line holding `offset` starts. */
function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

/** The leading white space of the line `offset` is on. */
function lineIndent(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart(text, offset), offset))?.[0] ?? '';
}

/** `value` as JSON in the file's style, its lines after the first indented by `indent`. */
function render(value: unknown, indent: string, style: Style): string {
  if (style.compact) return JSON.stringify(value);
  return JSON.stringify(value, null, style.unit).split('\n').join(`${style.eol}${indent}`);
}

/** Where a value (a property node's value, an item) sits: the property node for a property's value. */
function member(node: Node): Node {
  return node.parent?.type === 'property' ? node.parent : node;
}

function replaceAt(text: string, node: Node, value: unknown, style: Style): string {
  return text.slice(0, node.offset) + render(value, lineIndent(text, member(node).offset), style) + text.slice(node.offset + node.length);
}

/**
 * What lies between two members (or a member and its container's end): white space, comments and
 * at most one comma. `comma`: the comma's offset (-1: none); `commentEnd`: where the last comment
 * ends (-1: none).
 */
function gapOf(text: string, from: number, to: number): { comma: number; commentEnd: number } {
  let comma = -1;
  let commentEnd = -1;
  for (let i = from; i < to; i++) {
    const c = text[i];
    if (c === ',') comma = i;
    else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = (end < 0 ? to : Math.min(end, to)) - 1;
      commentEnd = i + 1;
      if (text[i] === '\r') commentEnd = i;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = (end < 0 ? to : Math.min(end + 2, to)) - 1;
      commentEnd = i + 1;
    }
  }
  return { comma, commentEnd };
}

/**
 * A property (`key` a string) or item (`key` -1) added after the last one of `container`, on a line
 * of its own (on the same line, in a one-line file). A comment after the last member on its line
 * stays with that member: the new one goes on the next line.
 */
function appendTo(text: string, container: Node, key: string | number, value: unknown, style: Style): string {
  const children = container.children ?? [];
  const last = children.at(-1);
  const startsLine = last !== undefined && /^[ \t]*$/.test(text.slice(lineStart(text, last.offset), last.offset));
  // The indent of the members already there when they start their lines, else one more than the container's line.
  const indent = last && startsLine ? lineIndent(text, last.offset) : lineIndent(text, container.offset) + style.unit;
  const body = `${typeof key === 'string' ? `${JSON.stringify(key)}:${style.compact ? '' : ' '}` : ''}${render(value, indent, style)}`;
  const newLine = style.compact ? '' : `${style.eol}${indent}`;
  if (last) {
    const at = last.offset + last.length;
    const close = container.offset + container.length - 1;
    const { commentEnd } = gapOf(text, at, close);
    const lineEnd = text.indexOf('\n', at);
    // `last, // a comment about last` then the new member on the next line.
    if (!style.compact && commentEnd >= 0 && lineEnd >= 0 && commentEnd <= lineEnd && /^[ \t\r]*$/.test(text.slice(commentEnd, lineEnd)))
      return `${text.slice(0, at)},${text.slice(at, commentEnd)}${newLine}${body}${text.slice(commentEnd)}`;
    return `${text.slice(0, at)},${newLine}${body}${text.slice(at)}`;
  }
  const at = container.offset + 1;
  const close = container.offset + container.length - 1;
  // An empty container: white space inside it gives way to the member on its own line (comments stay).
  const inside = text.slice(at, close);
  const keep = inside.trim() === '' ? '' : inside;
  const end = style.compact ? '' : `${style.eol}${lineIndent(text, container.offset)}`;
  return `${text.slice(0, at)}${keep}${newLine}${body}${end}${text.slice(close)}`;
}

/**
 * A property or item taken out with its comma: the one after it when another member follows, else
 * (the last one) the one before it. Comments around it that are not inside it stay.
 */
function removeAt(text: string, node: Node): string {
  const target = member(node);
  const end = target.offset + target.length;
  const siblings = target.parent?.children ?? [];
  const index = siblings.indexOf(target);
  const previous = siblings[index - 1];
  const next = siblings[index + 1];
  if (next) {
    // A member before another: it goes with its own comma, and the next one takes its place; what
    // lies before it (the previous member's comma and any comment after it) stays as it is.
    const { comma, commentEnd } = gapOf(text, end, next.offset);
    if (commentEnd > comma) return text.slice(0, target.offset) + text.slice(comma + 1).replace(/^[ \t]+/, '');
    return text.slice(0, target.offset) + text.slice(next.offset);
  }
  if (previous) {
    // The last member (as an added one is): it goes with the comma before it.
    const from = previous.offset + previous.length;
    const { comma, commentEnd } = gapOf(text, from, target.offset);
    if (comma < 0) return text.slice(0, from) + text.slice(end); // not JSON: cannot happen
    // `previous, // its comment` + new line + target: the comma goes, the comment stays, the rest goes.
    if (commentEnd > comma) return text.slice(0, comma) + text.slice(comma + 1, commentEnd) + text.slice(end);
    return text.slice(0, comma) + text.slice(end);
  }
  const container = target.parent as Node;
  const inside = text.slice(container.offset + 1, target.offset) + text.slice(end, container.offset + container.length - 1);
  // The only member: the container is left empty, `{}` or `[]`, but for comments of the user's.
  if (gapOf(inside, 0, inside.length).commentEnd < 0) return text.slice(0, container.offset + 1) + text.slice(container.offset + container.length - 1);
  return text.slice(0, target.offset) + text.slice(end);
}
