/**
 * Cutting text to a length without cutting a character in two. A character beyond the BMP (an emoji,
 * a rare CJK ideograph) is two UTF-16 units; a cut between them leaves a lone half, which JSON.stringify
 * writes as `\ud83d` and strict readers (jq, serde_json, so Codex) refuse. Every cut of text the tool
 * prints, writes into a transcript or sends to a provider goes through these.
 */

function isHigh(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLow(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** Whether a cut of `text` at `at` falls between the two halves of one character. */
function splitsPair(text: string, at: number): boolean {
  return at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at));
}

/** The first `units` UTF-16 units of `text`, one fewer when the last would be half a character. */
export function headOf(text: string, units: number): string {
  return text.slice(0, splitsPair(text, units) ? units - 1 : units);
}

/** The last `units` UTF-16 units of `text`, one fewer when the first would be half a character. */
export function tailOf(text: string, units: number): string {
  const start = text.length - units;
  if (start <= 0) return text;
  return text.slice(splitsPair(text, start) ? start + 1 : start);
}

/** `text` when it has at most `max` units, else its head and an ellipsis in `max` units or fewer. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${headOf(text, Math.max(0, max - 1))}…`;
}

/** `text` on one line (each run of white space one space, none at the ends), clipped to `max`. */
export function clipLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}

/**
 * Text for a terminal: control characters shown as `?`, as `ls` shows them. A file name can hold an
 * escape sequence (`\e]0;…`, `\e[2J`) that, printed as it is, would drive the terminal of whoever
 * runs the command; and a line break in a table cell would break its row. `lines`: keep tabs and
 * line breaks (a multi-line message), else they are shown as `?` too (a table cell).
 */
export function printable(text: string, options: { readonly lines?: boolean } = {}): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is replaced
  return text.replace(options.lines ? /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g : /[\u0000-\u001f\u007f-\u009f]/g, '?');
}
