import { Chalk } from 'chalk';
import type { RefreshReport } from '../../core/reports/refresh.js';
import { colorEnabled } from '../context.js';
import type { CliContext } from '../context.js';
import { thousands as n } from '../../core/numbers.js';
import { issuesLine } from './issues-line.js';

/** The human report of `devs-ctx refresh`. */
export function renderRefreshReport(report: RefreshReport, ctx: CliContext): string {
  const c = new Chalk({ level: colorEnabled(ctx, report.output === '-' ? ctx.stderr : ctx.stdout) ? 1 : 0 });
  const head = `${c.bold(report.file)} (${report.format}${report.node !== null ? `, node ${report.node}` : ''})`;
  const lines: string[] = [];
  switch (report.outcome) {
    case 'refreshed':
      lines.push(`${head}: refreshed; ${report.reason}`);
      break;
    case 'due':
      lines.push(`${head}: ${c.yellow('refresh due')}; ${report.reason}`);
      break;
    case 'not-due':
      lines.push(`${head}: no refresh due; ${report.reason}`);
      break;
    case 'just-refreshed':
      lines.push(`${head}: no refresh due; ${report.reason}`);
      break;
    case 'waiting-for-tool':
      lines.push(`${head}: ${c.yellow('refresh waits')}; ${report.reason}`);
      break;
    case 'unavailable':
      lines.push(`${head}: no refresh possible; ${report.reason}`);
      break;
    default:
      report.outcome satisfies never;
  }
  const injected = report.injected;
  if (injected) {
    const how =
      injected.placement === 'envelope-rewritten' ? `prepended to the reasoning of envelope ${injected.turnId}` : `appended as turn ${injected.turnId}`;
    lines.push(`  ${how} (${n(injected.tokens)} tokens${injected.condensed ? `, condensed to fit --refresh-tokens ${n(injected.budgetTokens)}` : ''})`);
    lines.push(`  TAS from ${injected.sources.tas ?? c.yellow('nowhere (none found)')}; PRD from ${injected.sources.prd ?? c.yellow('nowhere (none found)')}`);
  }
  const issues = issuesLine(report.issues);
  if (issues) lines.push(c.yellow(issues));
  if (report.output && report.output !== '-') lines.push(`  ${injected ? 'written to' : 'written unchanged to'} ${report.output}`);
  return `${lines.join('\n')}\n`;
}
