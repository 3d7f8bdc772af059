import { shellWord } from '../../core/git-hook.js';
import { issuesLine } from './issues-line.js';
import { Chalk } from 'chalk';
import type { PruneReport } from '../../core/reports/prune.js';
import { colorEnabled } from '../context.js';
import type { CliContext } from '../context.js';
import { thousands as n } from '../../core/numbers.js';
import { clipLine } from '../../core/text-cut.js';

const MAX_ACTION_ROWS = 40;

/** The human report of a prune (or, with --dry-run, of the plan). */
export function renderPruneReport(report: PruneReport, ctx: CliContext): string {
  const c = new Chalk({ level: colorEnabled(ctx, report.output === '-' ? ctx.stderr : ctx.stdout) ? 1 : 0 });
  const lines: string[] = [];
  const head = `${c.bold(report.file)} (${report.format})`;
  if (report.outcome === 'no-change') {
    lines.push(`${head}: nothing to prune; ${report.reason ?? 'no change'}`);
    lines.push(`  ${n(report.before.tokens)} tokens in ${n(report.before.turns)} turns; urgency ${report.urgency}; target ${n(report.limits.target)}`);
    if (report.output && report.output !== '-' && !report.dryRun) lines.push(`  written unchanged to ${report.output}`);
    return `${lines.join('\n')}\n`;
  }
  const verb = report.dryRun ? 'would prune' : 'pruned';
  lines.push(
    `${head}: ${verb} ${n(report.before.tokens)} → ${n(report.after.tokens)} tokens${report.dryRun ? ' (estimate)' : ''} (target ${n(report.limits.target)}, urgency ${report.urgency})`,
  );
  const cx = report.context;
  if (cx && cx.basis !== 'estimate') {
    lines.push(
      c.dim(
        `  sizes in the model's tokens (${cx.basis}: ${cx.scale} × the estimate + ${n(cx.overhead)}); ` +
          `the estimate goes ${n(cx.estimate.before)} → ${n(cx.estimate.after)}, and per-turn figures below are estimates`,
      ),
    );
  }
  const parts: string[] = [];
  if (report.dropped.turns > 0) parts.push(`${report.dryRun ? 'drop' : 'dropped'} ${n(report.dropped.turns)} turns (${n(report.dropped.tokens)} tokens)`);
  if (report.masked.turns > 0)
    parts.push(`${report.dryRun ? 'mask' : 'masked'} ${n(report.masked.turns)} tool results (${n(report.masked.tokensSaved)} tokens saved)`);
  if (report.summary) parts.push(`summary ${n(report.summary.tokens)} tokens`);
  if (parts.length > 0) lines.push(`  ${parts.join(', ')}`);
  lines.push(`  strategy ${report.strategy}; goal (${report.goal.source}): ${clipLine(report.goal.text, 90) || '(none)'}`);
  const providerLine = providersLine(report);
  if (providerLine) lines.push(providerLine);
  for (const fallback of report.providers?.fallback ?? [])
    lines.push(c.yellow(`  fallback: ${fallback.provider} failed; the offline ${fallback.usedInstead} was used instead`));
  if (report.dropped.fromProtectedTail > 0)
    lines.push(c.yellow(`  hard limit: ${n(report.dropped.fromProtectedTail)} turns of the protected tail were dropped too`));
  const issues = issuesLine(report.issues);
  if (issues) lines.push(c.yellow(issues));
  if (!report.reachedTarget)
    lines.push(
      c.yellow(
        `  the target was not reached: ${n(report.after.tokens)} tokens are left${report.summary ? `, ${n(report.summary.tokens)} of them the summary;` : ':'} the rest are turns a prune keeps (pinned, the protected tail)`,
      ),
    );
  if (report.dryRun) {
    lines.push('', `  ${'action'.padEnd(6)}  ${'turn'.padEnd(38)}  ${'type'.padEnd(11)}  ${'saved'.padStart(9)}  why`);
    for (const action of report.actions.slice(0, MAX_ACTION_ROWS)) {
      const first = action.turns[0];
      const more = action.turns.length > 1 ? ` +${action.turns.length - 1}` : '';
      lines.push(
        `  ${action.kind.padEnd(6)}  ${clipLine(`${first?.id ?? ''}${more}`, 38).padEnd(38)}  ${(first?.type ?? '').padEnd(11)}  ${n(action.tokensSaved).padStart(9)}  ${action.reason}`,
      );
    }
    if (report.actions.length > MAX_ACTION_ROWS) lines.push(`  … and ${n(report.actions.length - MAX_ACTION_ROWS)} more actions (--json lists them all)`);
    lines.push('', '  dry run: nothing was written');
  } else {
    if (report.archive) {
      // restore reads the pruned transcript: the file written, or the one standard output went to.
      const pruned = report.output === '-' || report.output === null ? 'FILE (the file you saved the pruned transcript to)' : shellWord(report.output);
      lines.push(`  archived in ${report.archive.path} (prune ${report.archive.eventId}); undo with: devs-ctx restore ${pruned}`);
    } else lines.push(c.yellow('  not archived (--no-archive): the removed turns exist only in the original file'));
    if (report.output && report.output !== '-') lines.push(`  written to ${report.output}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `summary by gemini:…; ranked by …; 3 requests (1 retry), 12,345 tokens sent, 800 received, about $0.0254; 2 secrets masked`. */
function providersLine(report: PruneReport): string | undefined {
  const p = report.providers;
  if (!p || (p.requests === 0 && p.embeddingsCached === 0 && !p.summarizer.startsWith('gemini') && !p.embedder.startsWith('gemini'))) return undefined;
  const parts = [`summary by ${p.summarizer}`, `ranked by ${p.embedder}`];
  const calls = [
    `${n(p.requests)} Gemini request${p.requests === 1 ? '' : 's'}${p.retries > 0 ? ` (${n(p.retries)} ${p.retries === 1 ? 'retry' : 'retries'})` : ''}`,
  ];
  if (p.tokensSent > 0 || p.tokensReceived > 0) calls.push(`${n(p.tokensSent)} tokens sent, ${n(p.tokensReceived)} received`);
  if (p.embeddingTokens > 0) calls.push(`${n(p.embeddingTokens)} tokens embedded`);
  if (p.embeddingsCached > 0) calls.push(`${n(p.embeddingsCached)} ${p.embeddingsCached === 1 ? 'vector' : 'vectors'} from the cache`);
  calls.push(p.estimatedCostUsd === null ? 'cost unknown for this model' : `about $${p.estimatedCostUsd.toFixed(4)}`);
  const masked = p.redacted ? `; ${n(p.redacted.total)} secret${p.redacted.total === 1 ? '' : 's'} masked before sending` : '; redaction off (--no-redact)';
  return `  ${parts.join('; ')}\n  ${calls.join(', ')}${masked}`;
}
