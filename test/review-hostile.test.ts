import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { devsCtxRunner } from '../src/cli/commands/agent-install.js';

/** Defects a hostile review of issues 13, 15, 17 and 19 found, each with the test that failed before its fix. */

describe('agent hook commands quote their paths for the shell', () => {
  it('a devs-ctx installed under a folder named like a command substitution runs no code and gets its own path', () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'devs-ctx-quote-')));
    const dir = join(root, `a$(touch PWNED)\`touch PWNED2\`"'b $HOME`);
    mkdirSync(dir);
    const bin = join(dir, 'devs-ctx.js');
    writeFileSync(bin, 'console.log(JSON.stringify(process.argv.slice(1)))\n');
    const command = `${devsCtxRunner(bin).prefix} agent-hook pre-compact --agent claude-code`;
    const result = spawnSync('sh', ['-c', command], { cwd: root, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), [bin, 'agent-hook', 'pre-compact', '--agent', 'claude-code']);
    assert.equal(existsSync(join(root, 'PWNED')), false);
    assert.equal(existsSync(join(root, 'PWNED2')), false);
  });
});
