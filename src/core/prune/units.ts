import type { TranscriptEntry } from '../transcript.js';

/**
 * Atomic units of a transcript: entries that must be kept or dropped together. A tool call and its
 * result(s) form one unit; so do parallel calls (consecutive calls) with all their results. The
 * lines of one Claude Code response are already one entry. Where a format records no call ids,
 * a run of tool calls joins the tool results that follow it.
 */
export interface PruneUnit {
  /** Entry indexes in order. */
  readonly entries: readonly number[];
}

class DisjointSet {
  private readonly parent: number[];
  constructor(size: number) {
    this.parent = Array.from({ length: size }, (_, i) => i);
  }
  find(x: number): number {
    let root = x;
    while (this.parent[root] !== root) root = this.parent[root] ?? root;
    while (this.parent[x] !== root) {
      const next = this.parent[x] ?? root;
      this.parent[x] = root;
      x = next;
    }
    return root;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

/** The ids an entry calls and answers: its links, or a `callId` field on the turn (Codex, OpenHands, native). */
export function toolIds(entry: TranscriptEntry): { calls: readonly string[]; answers: readonly string[] } {
  if (entry.links) return { calls: entry.links.calls ?? [], answers: entry.links.answers ?? [] };
  const callId = entry.turn['callId'] ?? entry.turn['toolCallId'] ?? entry.turn['tool_call_id'];
  if (typeof callId !== 'string') return { calls: [], answers: [] };
  if (entry.turn.type === 'tool_call') return { calls: [callId], answers: [] };
  if (entry.turn.type === 'tool_result') return { calls: [], answers: [callId] };
  return { calls: [], answers: [] };
}

export function buildUnits(entries: readonly TranscriptEntry[]): PruneUnit[] {
  const set = new DisjointSet(entries.length);
  // The latest call made under each id: a result answers that one. Some agents reuse ids
  // (`call_0` in every turn), so an id pairs a result with its nearest earlier call, not all of them.
  const openCall = new Map<string, number>();
  let previousWasCall = false;
  let unlinkedCalls: number[] = [];
  entries.forEach((entry, i) => {
    const { calls, answers } = toolIds(entry);
    for (const id of answers) {
      const call = openCall.get(id);
      if (call !== undefined) set.union(call, i);
    }
    for (const id of calls) openCall.set(id, i);
    const isCall = entry.turn.type === 'tool_call' || calls.length > 0;
    // Parallel calls: consecutive calls move as one group.
    if (isCall && previousWasCall) set.union(i - 1, i);
    if (isCall && calls.length === 0) {
      if (!previousWasCall) unlinkedCalls = [];
      unlinkedCalls.push(i);
    } else if (entry.turn.type === 'tool_result' && answers.length === 0) {
      for (const call of unlinkedCalls) set.union(call, i);
    } else if (!isCall) unlinkedCalls = [];
    previousWasCall = isCall;
  });
  const groups = new Map<number, number[]>();
  entries.forEach((_, i) => {
    const root = set.find(i);
    const group = groups.get(root);
    if (group) group.push(i);
    else groups.set(root, [i]);
  });
  return [...groups.values()].sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0)).map((e) => ({ entries: e }));
}
