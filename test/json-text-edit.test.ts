import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT_HOOKS, withHooks, withMcpServer, withoutHooks, withoutMcpServer } from '../src/core/agent-config.js';
import { editJsonText, readJsonText } from '../src/core/json-text-edit.js';
import { seeded } from './helpers/prng.js';

/**
 * Settings edited in their own text (hook install --agent): what devs-ctx adds is the only change,
 * taking it out again gives the same bytes back, and what JSON.parse cannot keep (a 20-digit
 * number, `1e3`, a `\u` escape, comments in Gemini CLI's settings) stays as the user wrote it.
 */

const runner = { command: '/usr/bin/node', args: ['/opt/devs-ctx/bin/devs-ctx.js', 'mcp'] };
const commands = AGENT_HOOKS.gemini.map((spec) => ({ spec, command: `node devs-ctx.js agent-hook ${spec.hook} --agent gemini` }));

function installed(text: string, comments: boolean): string {
  const value = readJsonText(text, { comments }) as Record<string, unknown>;
  const edited = editJsonText(text, withMcpServer(withHooks(value, commands), runner), { comments });
  assert.ok(edited !== undefined, 'edited in place');
  return edited;
}

function uninstalled(text: string, comments: boolean): string {
  const value = readJsonText(text, { comments }) as Record<string, unknown>;
  const edited = editJsonText(text, withoutMcpServer(withoutHooks(value)), { comments });
  assert.ok(edited !== undefined, 'edited in place');
  return edited;
}

const layouts: Record<string, string> = {
  'four spaces, hooks of the user':
    '{\n    "model": "opus",\n    "hooks": {\n        "PreCompress": [{"hooks": [{"type": "command", "command": "./backup.sh"}]}]\n    }\n}\n',
  'tabs, CRLF': '{\r\n\t"theme": "Dracula",\r\n\t"mcpServers": {\r\n\t\t"db": {"command": "db-mcp"}\r\n\t}\r\n}\r\n',
  'one line, no newline at the end':
    '{"theme":"x","hooks":{"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"./audit.sh"}]}]}}',
  'empty object': '{}\n',
  'numbers and escapes JSON.parse cannot keep': '{\n  "big": 12345678901234567890,\n  "e": 1e3,\n  "name": "caf\\u00e9",\n  "permissions": {}\n}\n',
};

describe('editJsonText: settings edited in their own text', () => {
  for (const [name, text] of Object.entries(layouts)) {
    it(`${name}: install adds only devs-ctx's entries, uninstall gives the same bytes back`, () => {
      const after = installed(text, false);
      const value = JSON.parse(after) as { hooks: Record<string, unknown[]>; mcpServers: Record<string, unknown> };
      assert.deepEqual(Object.keys(value.hooks).sort(), [...new Set([...Object.keys(JSON.parse(text).hooks ?? {}), 'BeforeAgent', 'PreCompress'])].sort());
      assert.ok(value.mcpServers['devs-ctx']);
      assert.equal(uninstalled(after, false), text);
    });
  }

  it("keeps what JSON.parse loses: a 20-digit number, 1e3, a \\u escape; new lines take the file's indent and line end", () => {
    const text = layouts['numbers and escapes JSON.parse cannot keep'] as string;
    const after = installed(text, false);
    assert.ok(after.startsWith('{\n  "big": 12345678901234567890,\n  "e": 1e3,\n  "name": "caf\\u00e9",\n'), after);
    assert.match(after, /\n {2}"permissions": \{\},\n {2}"hooks": \{\n {4}"PreCompress": \[\n {6}\{\n/);
    const crlf = installed(layouts['tabs, CRLF'] as string, false);
    assert.equal(crlf.replace(/\r\n/g, '').includes('\n'), false, 'CRLF throughout');
    assert.match(crlf, /\r\n\t"hooks": \{\r\n\t\t"PreCompress"/);
  });

  it("Gemini CLI's comments stay where they are, through install and uninstall", () => {
    const text =
      '{\n  // my theme\n  "theme": "Dracula", /* keep */\n  "hooks": {\n    // audit every shell command\n    "BeforeTool": [\n      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./audit.sh" }] }\n    ]\n  }\n}\n';
    const after = installed(text, true);
    for (const comment of ['// my theme', '/* keep */', '// audit every shell command']) assert.ok(after.includes(comment), comment);
    assert.deepEqual(Object.keys((readJsonText(after, { comments: true }) as { hooks: object }).hooks), ['BeforeTool', 'PreCompress', 'BeforeAgent']);
    assert.equal(uninstalled(after, true), text);
  });

  it('a comment after the last item on its line stays with that item', () => {
    const text = '{\n  "hooks": {\n    "PreCompress": [\n      { "hooks": [{ "type": "command", "command": "./audit.sh" }] } // mine\n    ]\n  }\n}\n';
    const after = installed(text, true);
    assert.ok(after.includes('"./audit.sh" }] }, // mine\n      {\n'), after);
    assert.equal(uninstalled(after, true), text);
  });

  it('random settings in random layouts, with comments between members: install then uninstall gives the same bytes back', () => {
    const random = seeded(20261128);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 2 || r < 0.4) return pick([1, 'x', true, null, 12.5, 'caf\u00e9', []]);
      if (r < 0.7) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 3) }, (_, k) => [`k${depth}${k}`, value(depth + 1)]));
    };
    for (let round = 0; round < 300; round++) {
      const settings: Record<string, unknown> = { theme: value(1) };
      if (random() < 0.5) settings['hooks'] = { PreCompress: [{ hooks: [{ type: 'command', command: './mine.sh' }] }], Other: value(1) };
      if (random() < 0.5) settings['mcpServers'] = { db: { command: 'db' } };
      let text = JSON.stringify(settings, null, pick([0, 2, 4, '\t']));
      if (random() < 0.3) text = text.replace(/\n/g, '\r\n');
      const comments = random() < 0.5;
      // A comment after some commas, on the line of the member before (JSONC only).
      if (comments) text = text.replace(/,(\r?\n)/g, (m, eol: string) => (random() < 0.3 ? `, // note${eol}` : m));
      if (random() < 0.5) text += '\n';
      const after = installed(text, comments);
      assert.equal(uninstalled(after, comments), text, `round ${round}:\n${text}\n---\n${after}`);
    }
  });

  it("devs-ctx's members taken out from between the user's, after a comment on a comma: the text still reads, every comment stays", () => {
    const theirs = '{\n  "ui": {}, // my ui\n  "general": { "a": 1 } /* last */\n}\n';
    // Installed, then the user added "general" after devs-ctx's members.
    const installedText = installed('{\n  "ui": {} // my ui\n}\n', true);
    const edited = installedText.replace(/\n\}\n$/, ',\n  "general": { "a": 1 } /* last */\n}\n');
    assert.deepEqual(Object.keys(readJsonText(edited, { comments: true }) as object), ['ui', 'hooks', 'mcpServers', 'general'], edited);
    assert.equal(uninstalled(edited, true), theirs);
  });

  it("the user's edits made after install stay when only devs-ctx's entries are taken out", () => {
    const text = layouts['four spaces, hooks of the user'] as string;
    const after = installed(text, false).replace('"model": "opus"', '"model": "sonnet", "env": {"A": "1"}');
    assert.equal(uninstalled(after, false), text.replace('"model": "opus"', '"model": "sonnet", "env": {"A": "1"}'));
  });

  it('a text that would not read back as the settings (a key written twice) is not edited: undefined', () => {
    const text = '{"hooks": {"A": []}, "hooks": {"B": []}}';
    const value = readJsonText(text, { comments: false }) as Record<string, unknown>;
    assert.equal(editJsonText(text, withHooks(value, commands), { comments: false }), undefined);
  });
});
