/** The tool call ids one turn makes and answers. */
export interface ToolTurn {
  readonly calls: readonly string[];
  readonly answers: readonly string[];
}

/** A call without its answer, or an answer without its call, and the turn (index) it is in. */
export interface UnpairedId {
  readonly kind: 'call' | 'answer';
  readonly id: string;
  readonly at: number;
}

export interface PairingRules {
  /** `earlier`: an answer needs its call in the same or an earlier turn; `anywhere`: in any turn. */
  readonly callBefore: 'earlier' | 'anywhere';
  /** A call left unanswered in this turn is still running (the session ended while tools ran), not a problem. */
  readonly pending: (at: number) => boolean;
}

/**
 * Tool pairing over the turns of an active context, for every format that links calls and results
 * by id: answers without a call (in turn order), then calls without an answer (in turn order).
 */
export function unpairedToolIds(turns: readonly ToolTurn[], rules: PairingRules): UnpairedId[] {
  const answersWithoutCall: UnpairedId[] = [];
  const allCalls = new Set(turns.flatMap((t) => t.calls));
  const answered = new Set<string>();
  const called = new Set<string>();
  turns.forEach((turn, at) => {
    for (const id of turn.calls) called.add(id);
    for (const id of turn.answers) {
      const known = rules.callBefore === 'earlier' ? called.has(id) : allCalls.has(id);
      if (!known) answersWithoutCall.push({ kind: 'answer', id, at });
      answered.add(id);
    }
  });
  const callsWithoutAnswer: UnpairedId[] = [];
  turns.forEach((turn, at) => {
    if (rules.pending(at)) return;
    for (const id of turn.calls) if (!answered.has(id)) callsWithoutAnswer.push({ kind: 'call', id, at });
  });
  return [...answersWithoutCall, ...callsWithoutAnswer];
}

/** The `pending` rule of a session that can end while its last assistant turn's tools run. */
export function lastAssistantPending(roles: readonly string[]): (at: number) => boolean {
  const last = roles.lastIndexOf('assistant');
  return (at) => at === last;
}
