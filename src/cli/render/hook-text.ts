import { displayPath } from '../../io/git-hooks.js';
import type { CoveredTranscripts, HookInstallReport, HookStatusEntry, HookStatusReport, HookUninstallReport } from '../../core/reports/hook.js';

/** `devs-ctx hook` for a person: paths relative to where the command was run, when inside it. */

function blocking(blockOn: HookStatusEntry['blockOn']): string {
  return blockOn === 'none' ? 'never (no --block-on)' : `exits 1 when a transcript has reached the ${blockOn} limit before its prune`;
}

function runs(runner: HookStatusEntry['runner']): string {
  if (runner.bin === null) return runner.fallback;
  return `${runner.node ?? 'node'} ${runner.bin}${runner.binPresent ? '' : ' (missing now)'}, else ${runner.fallback}`;
}

function transcriptLines(covered: CoveredTranscripts, cwd: string, indent: string): string[] {
  const lines: string[] = [];
  const config = covered.config !== null ? displayPath(covered.config, cwd) : null;
  switch (covered.source) {
    case 'none':
      lines.push(
        `${indent}transcripts   none: ${config ? `${config} names no "transcripts"` : 'no devs-ctx.config.json'} (add them, or install with --transcript PATH)`,
      );
      return lines;
    case 'hook':
      lines.push(`${indent}transcripts   from the hook's --transcript list${config ? ` (limits from ${config})` : ''}:`);
      break;
    case 'config':
      lines.push(`${indent}transcripts   from ${config} "transcripts":`);
      break;
    default:
      covered.source satisfies never;
  }
  const width = Math.max(...covered.patterns.map((p) => p.pattern.length));
  for (const match of covered.patterns) {
    const n = match.files.length;
    lines.push(
      `${indent}  ${match.pattern.padEnd(width)}  ${n === 0 ? (match.refused !== undefined ? 'no file' : 'no file yet') : n === 1 ? '1 file' : `${n} files`}`,
    );
    if (match.refused !== undefined) lines.push(`${indent}    left out: ${match.refused} (allowTranscriptsOutsideRepository in your own config allows it)`);
    const shown = match.files.slice(0, 10);
    for (const f of shown) lines.push(`${indent}    ${displayPath(f, cwd)}`);
    if (match.files.length > shown.length) lines.push(`${indent}    … and ${match.files.length - shown.length} more`);
  }
  return lines;
}

export function renderHookStatus(report: HookStatusReport, cwd: string): string {
  const lines: string[] = [];
  const hooksDir = displayPath(report.hooksDir, cwd);
  const where = `${hooksDir}${report.hooksPath !== null ? ` (core.hooksPath ${report.hooksPath})` : ''}`;
  if (!report.installed) {
    lines.push(`devs-ctx hook: not installed${report.requested ? ` as ${report.requested.hook}` : ''} in ${where}`);
    if (report.requested?.state === 'foreign') {
      lines.push(`  ${displayPath(report.requested.path, cwd)} is another hook; install keeps it and runs it first`);
    }
    if (report.wouldCover) lines.push(...transcriptLines(report.wouldCover, cwd, '  '));
    lines.push(
      `  install it with: devs-ctx hook install${report.requested && report.requested.hook !== 'pre-commit' ? ` --hook ${report.requested.hook}` : ''}`,
    );
    return `${lines.join('\n')}\n`;
  }
  for (const hook of report.hooks) {
    lines.push(`devs-ctx hook: installed as ${hook.hook} in ${where}`);
    lines.push(`  file          ${displayPath(hook.path, cwd)}${hook.modified ? ' (edited since devs-ctx wrote it)' : ''} (devs-ctx ${hook.devsCtxVersion})`);
    lines.push(
      `  chains        ${hook.previous === null ? 'nothing (there was no hook before)' : `${displayPath(hook.previous, cwd)}, the hook that was there before; runs first${hook.previousPresent ? '' : ' (missing now)'}`}`,
    );
    lines.push(`  blocks        ${blocking(hook.blockOn)}`);
    lines.push(`  refresh       ${hook.refresh ? 'yes, when due' : 'no (--no-refresh)'}`);
    lines.push(`  runs          ${runs(hook.runner)}`);
    lines.push(...transcriptLines(hook.transcripts, cwd, '  '));
  }
  return `${lines.join('\n')}\n`;
}

export function renderHookInstall(report: HookInstallReport, cwd: string): string {
  const lines = [`${report.action} the devs-ctx ${report.hook} hook: ${displayPath(report.path, cwd)}`];
  if (report.previous !== null) lines.push(`  chains        ${displayPath(report.previous, cwd)}, the hook that was there before; runs first`);
  lines.push(`  blocks        ${blocking(report.blockOn)}`);
  lines.push(`  refresh       ${report.refresh ? 'yes, when due' : 'no (--no-refresh)'}`);
  lines.push(`  runs          ${runs(report.runner)}`);
  lines.push(...transcriptLines(report.transcripts, cwd, '  '));
  lines.push(`  undo with: devs-ctx hook uninstall${report.hook === 'pre-commit' ? '' : ` --hook ${report.hook}`}`);
  return `${lines.join('\n')}\n`;
}

export function renderHookUninstall(report: HookUninstallReport, hook: string | null, cwd: string): string {
  if (report.removed.length === 0) {
    return `no devs-ctx ${hook ? `${hook} ` : ''}hook in ${displayPath(report.hooksDir, cwd)}; nothing removed\n`;
  }
  const lines: string[] = [];
  for (const r of report.removed) {
    const path = displayPath(r.path, cwd);
    if (r.action === 'restored') lines.push(`removed the devs-ctx ${r.hook} hook; the hook that was there before is back in ${path}, byte for byte`);
    else if (r.missingPrevious !== null)
      lines.push(`removed the devs-ctx ${r.hook} hook (${path}); the hook it chained, ${displayPath(r.missingPrevious, cwd)}, was already gone`);
    else lines.push(`removed the devs-ctx ${r.hook} hook (${path}); there was no hook before it`);
  }
  return `${lines.join('\n')}\n`;
}
