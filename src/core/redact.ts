/**
 * Masks common secret shapes before text leaves the machine [issue 4]. What is masked is replaced
 * by `[REDACTED:<kind>]`, so a summary still says that a key was there without carrying it.
 * Deliberately conservative about shape: a false positive costs one identifier in a summary, a
 * false negative sends a credential to a provider.
 */

export interface RedactionResult {
  readonly text: string;
  /** How many secrets were masked, by kind. */
  readonly counts: Readonly<Record<string, number>>;
}

interface SecretPattern {
  readonly kind: string;
  readonly pattern: RegExp;
  /** Which capture group is the secret (the rest is kept); 0 = the whole match. */
  readonly group?: number;
}

// Order matters: the most specific shapes first, so a key is named by its provider.
const PATTERNS: readonly SecretPattern[] = [
  { kind: 'private-key', pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g },
  { kind: 'anthropic-key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: 'openai-key', pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g },
  { kind: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: 'google-oauth-token', pattern: /\bya29\.[0-9A-Za-z_-]{20,}/g },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  {
    kind: 'aws-secret-key',
    pattern: /(\baws_?secret_?access_?key\b["']?\s*[:=]\s*["']?)([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
    group: 2,
  },
  { kind: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})/g },
  { kind: 'gitlab-token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { kind: 'slack-token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { kind: 'stripe-key', pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g },
  { kind: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: 'huggingface-token', pattern: /\bhf_[A-Za-z0-9]{30,}/g },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { kind: 'bearer-token', pattern: /(\b(?:Bearer|Token)\s+)([A-Za-z0-9._~+/-]{16,}=*)/g, group: 2 },
  { kind: 'basic-auth', pattern: /(\bBasic\s+)([A-Za-z0-9+/]{16,}={0,2})/g, group: 2 },
  { kind: 'url-credentials', pattern: /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@"']+:)([^\s@/"']{3,})(@)/gi, group: 2 },
  {
    // password=…, "password": "…", PASSWORD: …, api_key=…, secret=…, token=… (with a value of some length)
    kind: 'password',
    pattern:
      /((?:\b|_)(?:pass(?:word|wd)?|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)\b["']?\s*[:=]\s*["']?)([^\s"'`,;&)}\]]{4,})/gi,
    group: 2,
  },
];

/** Masks the secret shapes above in `text`. Pure; the same text always gives the same result. */
export function redactSecrets(text: string): RedactionResult {
  const counts: Record<string, number> = {};
  let out = text;
  for (const { kind, pattern, group = 0 } of PATTERNS) {
    out = out.replace(pattern, (...args: unknown[]) => {
      const match = args[0] as string;
      if (match.includes('[REDACTED:')) return match;
      if (group === 0) {
        counts[kind] = (counts[kind] ?? 0) + 1;
        return `[REDACTED:${kind}]`;
      }
      const groups = args.slice(1, -2) as (string | undefined)[];
      const secret = groups[group - 1];
      if (!secret || secret.startsWith('[REDACTED') || isPlaceholder(secret)) return match;
      counts[kind] = (counts[kind] ?? 0) + 1;
      return groups.map((g, i) => (i === group - 1 ? `[REDACTED:${kind}]` : (g ?? ''))).join('');
    });
  }
  return { text: out, counts };
}

/** Values that only name a secret (`password=$DB_PASSWORD`, `<your-key>`, `****`) are left alone. */
function isPlaceholder(value: string): boolean {
  return /^(?:\$\{?[A-Z_][A-Z0-9_]*\}?|<[^>]*>|\*+|x+|\.\.\.|…|null|undefined|none|true|false|process\.env\.[A-Za-z_]+)$/i.test(value);
}

/** The total of a redaction's counts. */
export function redactionTotal(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** Adds `more` into `into` (for a run that redacts many texts). */
export function addRedactionCounts(into: Record<string, number>, more: Readonly<Record<string, number>>): void {
  for (const [k, v] of Object.entries(more)) into[k] = (into[k] ?? 0) + v;
}
