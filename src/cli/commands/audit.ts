import { readAgentHistory } from '../../core/agent-history.js';
import { AGENT_NAMES } from '../../core/names.js';
import { ExitCode, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { auditCompactions } from '../../core/identifiers.js';
import type { CompactionAudit } from '../../core/identifiers.js';
import { defaultCacheDir } from '../../io/count-cache.js';
import { STDIN } from '../../io/input.js';
import type { CliContext } from '../context.js';
import { reportError } from '../errors.js';
import type { AuditOptions } from '../flags/audit.js';
import { CachedCounter, loadTranscriptInput, settingsFor } from '../shared.js';
import { thousands } from '../../core/numbers.js';

const AUDIT_SCHEMA_VERSION = 1;

/** Shown per compaction in the text report (all are in --json). */
const DEFAULT_LOST_SHOWN = 15;

function share(kept: number, total: number): string {
  return total === 0 ? 'n/a' : `${Math.round((kept / total) * 100)}%`;
}

/**
 * `devs-ctx audit SESSION`: per compaction the agent made (Claude Code `compact_boundary` + summary,
 * Codex `compacted`, Gemini CLI `$set.messages` checkpoint with a `<state_snapshot>`), tokens before and after, and which identifiers of the compacted turns its
 * summary kept and which it lost, each lost one with the recall query that finds it again [issue 17].
 */
export async function runAudit(file: string | undefined, options: AuditOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  try {
    if (file === undefined) throw new UsageError('no session given', 'pass a Claude Code or Codex session file (or - for standard input)');
    const { settings } = settingsFor(options, ctx);
    const counter = new CachedCounter(settings.encoding, options.cache === false ? undefined : defaultCacheDir(ctx.env));
    const { doc, transcript, display } = await loadTranscriptInput(file, { format: undefined, strict: false, ctx });
    const history = readAgentHistory(doc.records, transcript.format);
    const audits = auditCompactions(history, (text) => counter.count(text));
    counter.save();
    const identifiers = audits.reduce((sum, a) => sum + a.identifiers, 0);
    const kept = audits.reduce((sum, a) => sum + a.kept.length, 0);
    const recallFile = file === STDIN ? '' : ` --file ${JSON.stringify(file)}`;
    if (json) {
      ctx.stdout.write(
        `${JSON.stringify(
          {
            schemaVersion: AUDIT_SCHEMA_VERSION,
            file: display,
            format: transcript.format,
            compactions: audits,
            totals: { compactions: audits.length, identifiers, kept, lost: identifiers - kept, keptShare: identifiers === 0 ? null : kept / identifiers },
          },
          null,
          2,
        )}\n`,
      );
      return ExitCode.ok;
    }
    if (audits.length === 0) {
      ctx.stdout.write(
        `${display}: no compaction by the agent in this ${transcript.format} session${(AGENT_NAMES as readonly string[]).includes(transcript.format) ? '' : ' (audit reads Claude Code compact boundaries, Codex compacted records and Gemini CLI checkpoints)'}\n`,
      );
      return ExitCode.ok;
    }
    const shown = options.lost ?? DEFAULT_LOST_SHOWN;
    for (const audit of audits) writeAudit(ctx, audit, shown, recallFile);
    ctx.stdout.write(`\n${audits.length} compaction(s): the summaries kept ${kept} of ${identifiers} identifiers (${share(kept, identifiers)}).\n`);
    ctx.stdout.write(
      `Lost ones come back with the MCP tool recall, or: devs-ctx recall QUERY (once the window was archived: devs-ctx hook install --agent …)\n`,
    );
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  }
}

function writeAudit(ctx: CliContext, audit: CompactionAudit, shown: number, recallFile: string): void {
  const when = audit.timestamp ? ` ${audit.timestamp}` : '';
  const recorded = audit.recordedTokensBefore !== undefined ? ` (the agent counted ${thousands(audit.recordedTokensBefore)})` : '';
  ctx.stdout.write(
    `Compaction ${audit.index + 1} (line ${audit.line}${when}${audit.trigger ? `, ${audit.trigger}` : ''}): ${audit.compactedTurns} turns, ${thousands(audit.tokensBefore)} tokens${recorded} -> summary of ${thousands(audit.tokensAfter)} tokens\n`,
  );
  ctx.stdout.write(`  identifiers kept ${audit.kept.length} of ${audit.identifiers} (${share(audit.kept.length, audit.identifiers)})\n`);
  const byKind = new Map<string, { kept: number; lost: number }>();
  for (const id of audit.kept) byKind.set(id.kind, { kept: (byKind.get(id.kind)?.kept ?? 0) + 1, lost: byKind.get(id.kind)?.lost ?? 0 });
  for (const id of audit.lost) byKind.set(id.kind, { kept: byKind.get(id.kind)?.kept ?? 0, lost: (byKind.get(id.kind)?.lost ?? 0) + 1 });
  ctx.stdout.write(`  ${[...byKind].map(([kind, n]) => `${kind} ${n.kept}/${n.kept + n.lost}`).join(', ')}\n`);
  if (audit.lost.length > 0) {
    ctx.stdout.write(`  lost${audit.lost.length > shown ? ` (first ${shown} of ${audit.lost.length}; --json lists all)` : ''}:\n`);
    for (const id of audit.lost.slice(0, shown))
      ctx.stdout.write(`    ${id.kind}: ${id.text}\n      devs-ctx recall ${JSON.stringify(id.recallQuery)}${recallFile}\n`);
  }
}
