import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactSecrets, redactionTotal } from '../src/core/redact.js';

// Secret-shaped strings are built at run time so this file never holds one a scanner would flag.
const repeat = (chars: string, n: number): string => chars.repeat(Math.ceil(n / chars.length)).slice(0, n);

const SECRETS: readonly { kind: string; text: string; secret: string }[] = [
  { kind: 'anthropic-key', secret: `sk-ant-api03-${repeat('Ab3_', 40)}`, text: 'ANTHROPIC=%s' },
  { kind: 'openai-key', secret: `sk-proj-${repeat('Xy9z', 48)}`, text: 'export OPENAI_API_KEY=%s' },
  { kind: 'google-api-key', secret: `AIza${repeat('Sy0_-k', 35)}`, text: 'key: %s in config' },
  { kind: 'aws-access-key', secret: `AKIA${repeat('QW3R', 16)}`, text: 'aws id %s' },
  { kind: 'aws-secret-key', secret: repeat('wJalrXUtnFEMI/K7MDENG+bPxRfiCY', 40), text: 'aws_secret_access_key = %s' },
  { kind: 'github-token', secret: `ghp_${repeat('a1B2', 36)}`, text: 'git clone https://x:%s@github.com/o/r' },
  { kind: 'github-token', secret: `github_pat_${repeat('11AB_cd', 82)}`, text: 'GH_TOKEN=%s' },
  { kind: 'slack-token', secret: `xoxb-${repeat('1234-', 30)}abc`, text: 'slack %s' },
  { kind: 'stripe-key', secret: `sk_live_${repeat('4eC39', 24)}`, text: 'stripe %s' },
  { kind: 'gitlab-token', secret: `glpat-${repeat('xY_z', 20)}`, text: 'CI_TOKEN %s' },
  { kind: 'npm-token', secret: `npm_${repeat('Ab12', 36)}`, text: '//registry.npmjs.org/:_authToken=%s' },
  { kind: 'jwt', secret: `eyJ${repeat('hbGci', 20)}.eyJ${repeat('zdWIi', 30)}.${repeat('SflKx', 43)}`, text: 'cookie: session=%s' },
  { kind: 'bearer-token', secret: repeat('abc.DEF_123-', 40), text: 'Authorization: Bearer %s' },
  { kind: 'password', secret: 'hunter2-correct-horse', text: 'DB_PASSWORD=%s npm run migrate' },
  { kind: 'password', secret: 'Sup3r$ecret!', text: '{"password": "%s", "user": "ada"}' },
  { kind: 'url-credentials', secret: 's3cr3tpass', text: 'postgres://admin:%s@db.internal:5432/app' },
  // Shapes a review found passing through: AWS CLI JSON, env files, camelCase, tokens by name.
  { kind: 'aws-json-secret', secret: repeat('wJalrXUtnFEMI/K7MDENG/bPx', 40), text: '"SecretAccessKey": "%s",' },
  { kind: 'aws-session-token', secret: `FwoGZXIvYXdzE${repeat('Jr/', 60)}`, text: 'aws_session_token = %s' },
  { kind: 'django-secret', secret: 'django-insecure-9x!k2m', text: 'SECRET_KEY=%s' },
  { kind: 'camelCase secretKey', secret: 's3cr3t-value-42', text: 'secretKey: "%s"' },
  { kind: 'PGPASSWORD', secret: 'hunter22', text: 'PGPASSWORD=%s psql -h db' },
  { kind: 'GH_TOKEN', secret: repeat('abcdef123456', 24), text: 'GH_TOKEN=%s gh pr list' },
  { kind: 'vault-token', secret: `hvs.${repeat('CAESIJ12ab', 30)}`, text: 'export VAULT_ADDR=x VAULT=%s' },
  { kind: 'json token', secret: 'abcd1234efgh', text: '{"token": "%s"}' },
  { kind: 'azure-key', secret: `${repeat('abcXYZ0123', 44)}==`, text: 'DefaultEndpointsProtocol=https;AccountKey=%s;EndpointSuffix=core.windows.net' },
  { kind: 'google-oauth-secret', secret: `GOCSPX-${repeat('aB3_', 28)}`, text: 'client secret %s' },
  { kind: 'slack-webhook', secret: `hooks.slack.com/services/T00000000/B00000000/${repeat('XxY', 24)}`, text: 'POST https://%s' },
  { kind: 'sendgrid-key', secret: `SG.${repeat('aB1-', 22)}.${repeat('cD2_', 43)}`, text: 'SENDGRID=%s' },
  { kind: 'curl -u', secret: 'pass1234', text: 'curl -u admin:%s https://api.internal' },
  { kind: 'mysql -p', secret: 'Passw0rd', text: 'mysql -uroot -p%s app' },
  { kind: 'a password with spaces', secret: 'correct horse battery staple', text: 'password: "%s"' },
];

for (const { kind, text, secret } of SECRETS) {
  test(`redaction: a ${kind} is masked and the rest of the line kept`, () => {
    const input = text.replace('%s', secret);
    const { text: out, counts } = redactSecrets(input);
    assert.ok(!out.includes(secret), `${kind} leaked: ${out}`);
    assert.match(out, /\[REDACTED:[a-z-]+\]/);
    assert.ok(redactionTotal(counts) >= 1);
    // The words around the secret survive.
    const before =
      text
        .split('%s')[0]!
        .replace(/[=:"\s]+$/, '')
        .split(/\s+/)
        .pop() ?? '';
    if (before.length > 2) assert.ok(out.includes(before.slice(0, 3)), `context lost: ${out}`);
  });
}

test('redaction: a private key block is masked whole', () => {
  const body = repeat('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 64 * 10)
    .match(/.{64}/g)!
    .join('\n');
  const input = `here:\n-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----\ndone`;
  const { text, counts } = redactSecrets(input);
  assert.equal(text, 'here:\n[REDACTED:private-key]\ndone');
  assert.deepEqual(counts, { 'private-key': 1 });
});

test('redaction: ordinary code, identifiers, hashes and placeholders are left alone', () => {
  const input = [
    'const password = process.env.DB_PASSWORD;',
    'password=$DB_PASSWORD',
    'api_key=<your-key-here>',
    'function parseConfig(sk_live) { return skipTokens; }',
    'commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed src/core/redact.ts',
    'see https://example.com/docs/auth for details',
    'Bearer tokens are explained in RFC 6750',
  ].join('\n');
  const { text, counts } = redactSecrets(input);
  assert.equal(text, input);
  assert.equal(redactionTotal(counts), 0);
});

test('redaction: counts, types, calls and names that merely contain "token" are not secrets', () => {
  const input = [
    'maxOutputTokens: 4096',
    'inputTokens: 1234, outputTokens: 99',
    '"tokenCount": 12345',
    'tokenizer: o200k_base',
    'password: string;',
    'token: getToken(user)',
    'auth: required',
    "fetch(url, { credentials: 'include' })",
    'const token = await fetchToken()',
    "bypass: 'always'",
    'firstPass = computeFirst',
    'cancellationToken: CancellationToken',
    'token: this.token',
    'find /var/lib/mysql -print',
    'sortKey: "name", primaryKey: "id"',
  ].join('\n');
  const { text, counts } = redactSecrets(input);
  assert.equal(text, input);
  assert.equal(redactionTotal(counts), 0);
});

// Not a speed target: a guard against patterns that backtrack quadratically (before the fix, the
// first input took 94 s). Each 1 MB input takes well under a second now.
test('redaction: long pathological lines finish (no catastrophic backtracking)', () => {
  const inputs = [
    `${'a+'.repeat(300_000)}://x`,
    `${'eyJabcdefgh-'.repeat(85_000)}.eyJ`,
    'ab-'.repeat(350_000),
    'pkg.'.repeat(250_000),
    'TOKEN='.repeat(170_000),
    `${'x'.repeat(1_000_000)}=`,
  ];
  // CPU time of this process, not the wall clock: another process keeping the cores busy does not count.
  const started = process.cpuUsage();
  for (const input of inputs) redactSecrets(input);
  const { user, system } = process.cpuUsage(started);
  const ms = (user + system) / 1000;
  assert.ok(ms < 20_000, `took ${Math.round(ms)} ms of CPU`);
});

test('redaction: a long value is masked whole, and quotes around it are kept (JSON stays JSON)', () => {
  const long = repeat('x7Q', 750);
  for (const input of [`{"client_secret": "${long}"}`, `"access_token": "${long.slice(0, 600)}"`, `DB_PASSWORD=${long}`]) {
    const { text } = redactSecrets(input);
    assert.ok(!text.includes('x7Qx7Q'), `a tail leaked: ${text.slice(0, 120)}`);
  }
  const json = redactSecrets('{"password": "Sup3r$ecret!", "user": "ada"}').text;
  assert.deepEqual(JSON.parse(json), { password: '[REDACTED:secret-value]', user: 'ada' });
});

test('redaction is idempotent: masking masked text changes nothing', () => {
  const once = redactSecrets(`token: AKIA${repeat('QW3R', 16)} and password=hunter2-correct`).text;
  const twice = redactSecrets(once);
  assert.equal(twice.text, once);
  assert.equal(redactionTotal(twice.counts), 0);
});
