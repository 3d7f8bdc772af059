/**
 * A transcript's full report as a batch's `--json` prints it: an element of its `transcripts` array,
 * the single file's report written with 2-space indentation and every line after the first indented
 * 4 more (the array's own depth), then the batch's fields (its project and time span). The worker
 * that analyses a transcript writes it so; the report cache keeps it so, without the batch's fields,
 * and a re-run prints what it kept as bytes, never decoded, parsed or indented again.
 */
export type BatchReportText = string | Uint8Array;

/** What a batch adds to a report, from the row (src/cli/batch/session.ts's SessionSummary). */
interface BatchFields {
  readonly file: string;
  readonly project: string;
  readonly firstTimestamp: string | null;
  readonly lastTimestamp: string | null;
}

/** What a line of an element of the array starts with, beyond the report's own indentation. */
const ELEMENT_INDENT = '    ';

/** A value (a report with the batch's fields, a row's error) as an element of the array. */
export function elementJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, `\n${ELEMENT_INDENT}`);
}

/** How an element ends: the batch's fields, each on a line of its own, and the closing brace. */
function batchFieldsJson({ project, firstTimestamp, lastTimestamp }: BatchFields): string {
  const field = `,\n${ELEMENT_INDENT}  `;
  return `${field}"project": ${JSON.stringify(project)}${field}"firstTimestamp": ${JSON.stringify(firstTimestamp)}${field}"lastTimestamp": ${JSON.stringify(lastTimestamp)}\n${ELEMENT_INDENT}}`;
}

/** The report's end, once the batch's fields are cut off. */
const REPORT_END = Buffer.from(`\n${ELEMENT_INDENT}}`);
/** How an element that a batch wrote starts, and its line naming the file (the second field). */
const ELEMENT_START = Buffer.from(`{\n${ELEMENT_INDENT}  "schemaVersion": `);
const FILE_LINE = Buffer.from(`\n${ELEMENT_INDENT}  "file": `);
const COMMA = 0x2c;
const LINE_FEED = 0x0a;

/**
 * A kept report (its JSON, as bytes) as an element of the array, for the row `summary` (the file as
 * given now, then the batch's fields). Kept by a batch, it is an element without the batch's fields
 * (elementJson's indentation, `file` the second field, alone on its line): that line is replaced and the
 * batch's fields added, as bytes. Kept by `analyze FILE` (compact JSON), it is parsed and written out.
 */
export function keptAsElement(json: Uint8Array, summary: BatchFields): BatchReportText {
  const bytes = Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  const line = bytes.subarray(0, ELEMENT_START.length).equals(ELEMENT_START) ? bytes.indexOf(FILE_LINE) : -1;
  const next = line < 0 ? -1 : bytes.indexOf(LINE_FEED, line + 1);
  if (next < 0 || bytes[next - 1] !== COMMA || !bytes.subarray(bytes.length - REPORT_END.length).equals(REPORT_END)) {
    const { file, project, firstTimestamp, lastTimestamp } = summary;
    const report = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    return elementJson({ ...report, file, project, firstTimestamp, lastTimestamp });
  }
  return Buffer.concat([
    bytes.subarray(0, line),
    Buffer.from(`${FILE_LINE.toString()}${JSON.stringify(summary.file)},`),
    bytes.subarray(next, bytes.length - REPORT_END.length),
    Buffer.from(batchFieldsJson(summary)),
  ]);
}

/**
 * An element as the report cache keeps it: the batch's fields cut off as text (they end it, each on a
 * line of its own, and a string in JSON holds no line break); undefined when it does not end with them.
 */
export function elementToKeep(element: string, summary: BatchFields): string | undefined {
  const added = batchFieldsJson(summary);
  return element.endsWith(added) ? `${element.slice(0, -added.length)}${REPORT_END.toString()}` : undefined;
}
