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

// Order matters: the most specific shapes first, so a key is named by its provider. Every
// repetition is bounded, so no pattern backtracks quadratically on a long line.
/**
 * A name that holds a secret, without matching names that merely contain a secret word
 * (`bypass`, `maxOutputTokens`, `tokenizer`): the word is the whole name, or ends it after a
 * separator (`DB_PASSWORD`, `GH_TOKEN`, `client_secret`, `aws_secret_access_key`), an upper-case run
 * (`PGPASSWORD`) or a camelCase join (`dbPassword`, `secretKey`, `SessionToken`, `SecretAccessKey`).
 */
const LOWER = '(?:pass(?:word|wd|phrase)?|pwd|secret|token|credentials?|(?:api|access|secret|private|signing|encryption|master|account)[_-]?key|apikey)';
const UPPER = '(?:PASS(?:WORD|WD|PHRASE)?|PWD|SECRET|TOKEN|CREDENTIALS?|(?:API|ACCESS|SECRET|PRIVATE|SIGNING|ENCRYPTION|MASTER|ACCOUNT)[_-]?KEY|APIKEY)';
const CAMEL = '(?:Password|Passwd|Passphrase|Pwd|Secret|Token|Credentials?|(?:Api|Access|Secret|Private|Signing|Encryption|Master|Account)Key|ApiKey)';
const SECRET_NAME =
  `(?:(?:[A-Za-z0-9]{1,30}[_.-]){0,4}(?:${LOWER}|${UPPER})` +
  `|[A-Z0-9]{1,20}${UPPER}` +
  `|(?:secret|private|api|access|signing|encryption|master|account)Key` +
  `|[A-Za-z][A-Za-z0-9]{0,40}${CAMEL})`;
const BEFORE_NAME = '(?:^|[^A-Za-z0-9_.])';
const PATTERNS: readonly SecretPattern[] = [
  {
    kind: 'private-key',
    pattern: /-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----|$)/g,
  },
  { kind: 'anthropic-key', pattern: /\bsk-ant-[A-Za-z0-9_-]{20,400}/g },
  { kind: 'openai-key', pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,400}/g },
  { kind: 'google-api-key', pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g },
  { kind: 'google-oauth-token', pattern: /\bya29\.[0-9A-Za-z_-]{20,2000}/g },
  { kind: 'google-oauth-secret', pattern: /\bGOCSPX-[0-9A-Za-z_-]{20,100}/g },
  { kind: 'google-refresh-token', pattern: /\b1\/\/0[0-9A-Za-z_-]{30,500}/g },
  { kind: 'aws-access-key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  { kind: 'github-token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{40,255})/g },
  { kind: 'gitlab-token', pattern: /\bglpat-[A-Za-z0-9_-]{20,100}/g },
  { kind: 'slack-token', pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,300}|\bxapp-[0-9]-[A-Za-z0-9-]{10,300}/g },
  { kind: 'slack-webhook', pattern: /\bhooks\.slack\.com\/services\/[A-Za-z0-9/_-]{20,200}/g },
  { kind: 'stripe-key', pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,255}|\bwhsec_[A-Za-z0-9+/=]{20,255}/g },
  { kind: 'sendgrid-key', pattern: /\bSG\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{16,64}/g },
  { kind: 'npm-token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g },
  { kind: 'pypi-token', pattern: /\bpypi-[A-Za-z0-9_-]{50,300}/g },
  { kind: 'huggingface-token', pattern: /\bhf_[A-Za-z0-9]{30,100}/g },
  { kind: 'vault-token', pattern: /\bhv[sbr]\.[A-Za-z0-9_-]{20,300}/g },
  { kind: 'azure-key', pattern: /(\b(?:AccountKey|SharedAccessKey|sig)=)([A-Za-z0-9+/%]{20,200}={0,2})/g, group: 2 },
  { kind: 'bearer-token', pattern: /(\b(?:Bearer|Token)\s{1,8})([A-Za-z0-9._~+/-]{16,4096}=*)/g, group: 2 },
  { kind: 'basic-auth', pattern: /(\bBasic\s{1,8})([A-Za-z0-9+/]{16,4096}={0,2})/g, group: 2 },
  { kind: 'url-credentials', pattern: /(\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/@"']{1,256}:)([^\s@/"']{3,256})(@)/gi, group: 2 },
  // Command lines: curl -u user:pass, mysql -pPass / --password=…, sshpass -p pass
  { kind: 'password', pattern: /(\s(?:-u|--user)\s{1,4}[^\s:]{1,64}:)([^\s]{3,256})/g, group: 2 },
  {
    kind: 'password',
    pattern: /((?:^|[\s;|&(])(?:mysql|mysqldump|mariadb)(?:\s{1,8}-{1,2}[A-Za-oq-z][^\s]{0,100}){0,10}\s{1,8}-p)([^\s-][^\s]{2,256})/g,
    group: 2,
  },
  {
    // A name that says secret, then = or :, then a quoted value (spaces allowed inside the quotes),
    // the quotes kept: PASSWORD="a b c", "client_secret": "…", secretKey: '…', SessionToken: "…"
    kind: 'secret-value',
    pattern: new RegExp(`(${BEFORE_NAME}["']?${SECRET_NAME}["']?\\s{0,4}[:=]\\s{0,4}")([^"\\n]{4,})(")`, 'gm'),
    group: 2,
  },
  {
    kind: 'secret-value',
    pattern: new RegExp(`(${BEFORE_NAME}["']?${SECRET_NAME}["']?\\s{0,4}[:=]\\s{0,4}')([^'\\n]{4,})(')`, 'gm'),
    group: 2,
  },
  {
    // The same with a bare value: DB_PASSWORD=hunter2, GH_TOKEN=…, aws_secret_access_key = …, --password=…
    // (the whole value: nothing needs to match after it, so the open repetition stays linear)
    kind: 'secret-value',
    pattern: new RegExp(`(${BEFORE_NAME}["']?${SECRET_NAME}["']?\\s{0,4}[:=]\\s{0,4})([^\\s"'\`,;&)}\\]]{4,})`, 'gm'),
    group: 2,
  },
];

/** Masks the secret shapes above in `text`. Pure; the same text always gives the same result. */
export function redactSecrets(text: string): RedactionResult {
  const counts: Record<string, number> = {};
  let out = redactJwts(text, counts);
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

const JWT = /^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}$/;
const JWT_IN_RUN = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g;

/**
 * JWTs, found in linear time: a regex started at every `eyJ` of a long run of token characters
 * rescans the rest of the run each time (quadratic); instead each maximal run of such characters
 * is taken once, and only a run that can hold a JWT is searched.
 */
function redactJwts(text: string, counts: Record<string, number>): string {
  if (!text.includes('.eyJ')) return text;
  return text.replace(/[A-Za-z0-9_.-]{30,}/g, (run) => {
    if (run.length > 16_384 || !run.includes('.eyJ')) return run;
    if (JWT.test(run)) {
      counts['jwt'] = (counts['jwt'] ?? 0) + 1;
      return '[REDACTED:jwt]';
    }
    return run.replace(JWT_IN_RUN, () => {
      counts['jwt'] = (counts['jwt'] ?? 0) + 1;
      return '[REDACTED:jwt]';
    });
  });
}

/**
 * Values that only name a secret or are not one: `password=$DB_PASSWORD`, `<your-key>`, `****`,
 * a number (`maxTokens: 4096`), a type (`password: string`), a call (`token: getToken()`).
 */
function isPlaceholder(value: string): boolean {
  const bare = value.replace(/^["']|["']$/g, '');
  return (
    /^(?:\$\{?[A-Z_][A-Z0-9_]*\}?|\{\{[^}]*\}\}|<[^>]*>|\*+|x+|\.\.\.|…|null|undefined|none|true|false|required|optional|string|number|boolean|str|int|bool|any|unknown|process\.env\.[A-Za-z_]+)$/i.test(
      bare,
    ) ||
    /^\d+(?:\.\d+)?$/.test(bare) ||
    /^[A-Za-z_$][\w$.]*\(/.test(bare) ||
    // code, not a value: a member (`this.token`, `config.apiKey`), a keyword, a type name
    /^(?:this|self|await|new|typeof|include|omit|same-origin)(?:\b|$)/.test(bare) ||
    /^[A-Za-z_$][\w$]*\.[A-Za-z_$][\w$.]*$/.test(bare) ||
    /^[A-Z][a-z]+(?:[A-Z][a-z]+)+$/.test(bare)
  );
}

/** The total of a redaction's counts. */
export function redactionTotal(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** Adds `more` into `into` (for a run that redacts many texts). */
export function addRedactionCounts(into: Record<string, number>, more: Readonly<Record<string, number>>): void {
  for (const [k, v] of Object.entries(more)) into[k] = (into[k] ?? 0) + v;
}
