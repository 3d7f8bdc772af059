import type { HookMeta } from '../git-hook.js';

/** `devs-ctx hook … --json`: what the git-hook commands print (schemaVersion 1). */
export const HOOK_SCHEMA_VERSION = 1;

/** One configured path or glob and the transcript files it names now. */
export interface TranscriptMatch {
  readonly pattern: string;
  readonly files: readonly string[];
  /** Why the pattern, or files it matched, were left out (outside the repository); absent when none were. */
  readonly refused?: string;
}

/** What is at a hook's path: nothing, someone else's hook, or ours. */
type HookFileState = 'absent' | 'foreign' | 'devs-ctx';

/** Which transcripts a hook covers, and where that list comes from. */
export interface CoveredTranscripts {
  /** `hook`: its own --transcript list; `config`: the config file's "transcripts"; `none`: neither. */
  readonly source: 'hook' | 'config' | 'none';
  /** The config file read (absolute), or null. */
  readonly config: string | null;
  readonly patterns: readonly TranscriptMatch[];
}

export interface HookStatusEntry {
  readonly hook: string;
  readonly path: string;
  readonly devsCtxVersion: string;
  readonly blockOn: HookMeta['blockOn'];
  readonly refresh: boolean;
  /** The chained hook (absolute) when there is one, and whether it is still there. */
  readonly previous: string | null;
  readonly previousPresent: boolean;
  /** Edited by hand since devs-ctx wrote it (uninstall then needs --force). */
  readonly modified: boolean;
  readonly runner: { readonly node: string | null; readonly bin: string | null; readonly binPresent: boolean; readonly fallback: string };
  readonly transcripts: CoveredTranscripts;
}

export interface HookStatusReport {
  readonly schemaVersion: number;
  readonly installed: boolean;
  readonly repository: string | null;
  readonly hooksDir: string;
  readonly hooksPath: string | null;
  readonly hooks: readonly HookStatusEntry[];
  /** With --hook: what is at that hook's path now. */
  readonly requested: { readonly hook: string; readonly path: string; readonly state: HookFileState } | null;
  /** When nothing is installed: what `hook install` would cover now. */
  readonly wouldCover: CoveredTranscripts | null;
}

export interface HookInstallReport {
  readonly schemaVersion: number;
  readonly action: 'installed' | 'updated';
  readonly hook: string;
  readonly path: string;
  readonly previous: string | null;
  readonly blockOn: HookMeta['blockOn'];
  readonly refresh: boolean;
  readonly runner: HookStatusEntry['runner'];
  readonly transcripts: CoveredTranscripts;
  readonly warnings: readonly string[];
}

export interface HookUninstallReport {
  readonly schemaVersion: number;
  readonly hooksDir: string;
  readonly removed: readonly {
    readonly hook: string;
    readonly path: string;
    readonly action: 'removed' | 'restored';
    readonly previous: string | null;
    readonly missingPrevious: string | null;
  }[];
}
