import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigFile, resolveSettings } from '../src/core/config.js';
import { catalogWindow, modelWindow, withAgentModel } from '../src/core/models.js';
import { analyzeContext } from '../src/core/session-context.js';
import { openhandsAdapter } from '../src/formats/openhands/read.js';
import { parseDocument } from '../src/io/jsonl.js';
import { runCli } from './helpers/cli.js';
import { realdataDir, realdataSkip } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

// Issue 14 item 1: the agent's model for `devs` transcripts (a flag or config key) and OpenHands' LLM config.

const DEVS = 'fixtures/devs/basic-session.jsonl';
const SONNET = 'claude-sonnet-4-5-20250929';

function analyzeJson(args: readonly string[]) {
  const result = runCli(['analyze', ...args, '--json']);
  assert.ok(result.stdout.length > 0, result.stderr);
  return { exitCode: result.exitCode, report: JSON.parse(result.stdout) };
}

function configDir(config: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-agent-model-'));
  writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify(config));
  return join(dir, 'devs-ctx.config.json');
}

test('settings: --agent-model overrides, config agentModel fills in, config model stays the Gemini summary model', () => {
  assert.equal('agentModel' in resolveSettings({ flags: {}, env: {} }), false);
  assert.deepEqual(resolveSettings({ flags: { agentModel: 'a' }, env: {} }).agentModel, { id: 'a', from: '--agent-model', overrides: true });
  const file = { path: 'c.json', config: parseConfigFile('c.json', { agentModel: 'b', model: 'gemini-3.5-flash' }) };
  assert.deepEqual(resolveSettings({ flags: {}, env: {}, file }).agentModel, { id: 'b', from: 'c.json agentModel', overrides: false });
  assert.equal(resolveSettings({ flags: { agentModel: 'a' }, env: {}, file }).agentModel?.id, 'a', 'the flag beats the config key');
  const geminiOnly = { path: 'c.json', config: parseConfigFile('c.json', { model: 'gemini-3.5-flash' }) };
  assert.equal('agentModel' in resolveSettings({ flags: {}, env: {}, file: geminiOnly }), false, 'config model is not the agent model');
  assert.throws(() => parseConfigFile('c.json', { agentModel: '' }), /key "agentModel".*agent's model id/);
});

test('withAgentModel: the flag replaces what a file names, the config key only fills in; a recorded window stays', () => {
  const flag = { id: SONNET, from: '--agent-model', overrides: true };
  const config = { id: SONNET, from: 'c.json agentModel', overrides: false };
  assert.equal(withAgentModel(undefined, undefined), undefined);
  assert.deepEqual(withAgentModel(undefined, config), { id: SONNET, idFrom: 'c.json agentModel' });
  const named = { id: 'gpt-5-codex', agent: 'codex', recordedWindow: 272_000 } as const;
  assert.equal(withAgentModel(named, config), named, 'a model the file names beats the config key');
  assert.deepEqual(withAgentModel(named, flag), { ...named, id: SONNET, idFrom: '--agent-model' });
  assert.equal(modelWindow(withAgentModel(named, flag))?.window, 272_000, "the agent's recorded window is what it ran with");
  assert.equal(modelWindow(withAgentModel({ agent: 'claude-code' }, flag))?.source, 'model');
});

test('a devs transcript with nothing known keeps the seeds 500k / 800k exactly', () => {
  const { report } = analyzeJson([DEVS]);
  assert.deepEqual(report.limits, { soft: 500_000, hard: 800_000, source: 'default', from: 'default' });
  assert.deepEqual([report.context.model, report.context.window], [null, null]);
  // A config with only the Gemini summary model changes nothing.
  const gemini = analyzeJson([DEVS, '--config', configDir({ model: 'gemini-3.5-flash' })]).report;
  assert.deepEqual(gemini.limits, report.limits);
  assert.equal(gemini.context.model, null);
});

test('devs: --agent-model gives the model and its catalog window; the limits are 50 % / 80 % of it (source model)', () => {
  const { report } = analyzeJson([DEVS, '--agent-model', SONNET]);
  assert.deepEqual([report.context.model, report.context.window], [SONNET, 200_000]);
  assert.deepEqual([report.limits.soft, report.limits.hard, report.limits.source], [100_000, 160_000, 'model']);
  assert.match(report.limits.from, /claude-sonnet-4-5-20250929 \(--agent-model\) in the @pydantic\/genai-prices catalog/);
  const text = runCli(['analyze', DEVS, '--agent-model', 'gpt-4o']).stdout;
  assert.match(text, /Model {5}gpt-4o · window 128,000/);
});

test('devs: config agentModel does the same; --window and config window still win over the model', () => {
  const path = configDir({ agentModel: 'gpt-4o' });
  const { report } = analyzeJson([DEVS, '--config', path]);
  assert.deepEqual([report.context.model, report.context.window], ['gpt-4o', 128_000]);
  assert.deepEqual([report.limits.soft, report.limits.hard, report.limits.source], [64_000, 102_400, 'model']);
  assert.match(report.limits.from, /gpt-4o \(.*devs-ctx\.config\.json agentModel\)/);

  const flagged = analyzeJson([DEVS, '--agent-model', SONNET, '--window', '1M']).report;
  assert.deepEqual([flagged.limits.soft, flagged.limits.hard, flagged.limits.source], [500_000, 800_000, 'flag']);
  const windowed = analyzeJson([DEVS, '--config', configDir({ agentModel: SONNET, window: 300_000 })]).report;
  assert.deepEqual([windowed.limits.soft, windowed.limits.hard, windowed.limits.source], [150_000, 240_000, 'config']);
});

test('an unknown --agent-model is named but changes no limits', () => {
  const { report } = analyzeJson([DEVS, '--agent-model', 'no-such-model-xyz']);
  assert.equal(report.context.model, 'no-such-model-xyz');
  assert.deepEqual([report.limits.soft, report.limits.hard, report.limits.source], [500_000, 800_000, 'default']);
  const empty = runCli(['analyze', DEVS, '--agent-model', ' ']);
  assert.equal(empty.exitCode, 2);
  assert.match(empty.stderr, /--agent-model needs a model id/);
});

test('a file that names its model: --agent-model wins over it, config agentModel does not', () => {
  // Claude Code's fixture names claude-opus-4-5 (200k in Claude Code).
  const file = 'fixtures/claude-code/compact-boundary.jsonl';
  const own = analyzeJson([file]).report;
  assert.equal(own.context.model, 'claude-opus-4-5');
  const config = analyzeJson([file, '--config', configDir({ agentModel: 'gpt-4o' })]).report;
  assert.deepEqual([config.context.model, config.context.window, config.limits.hard], ['claude-opus-4-5', 200_000, 160_000]);
  const flagged = analyzeJson([file, '--agent-model', 'gpt-4o']).report;
  assert.deepEqual([flagged.context.model, flagged.context.window, flagged.limits.hard, flagged.limits.source], ['gpt-4o', 128_000, 102_400, 'model']);
});

test('prune and replay take --agent-model: their limits are the model window', () => {
  const prune = runCli(['prune', DEVS, '--dry-run', '--json', '--agent-model', 'gpt-4o', '--summarizer', 'extractive', '--embedder', 'local']);
  assert.equal(prune.exitCode, 0, prune.stderr);
  const pruned = JSON.parse(prune.stdout);
  assert.deepEqual([pruned.limits.soft, pruned.limits.hard, pruned.limits.target], [64_000, 102_400, 32_000]);
  const plain = JSON.parse(runCli(['prune', DEVS, '--dry-run', '--json', '--summarizer', 'extractive', '--embedder', 'local']).stdout);
  assert.deepEqual([plain.limits.soft, plain.limits.hard], [500_000, 800_000]);
  const replay = runCli(['replay', DEVS, '--json', '--agent-model', 'gpt-4o', '--summarizer', 'extractive', '--embedder', 'local']);
  assert.equal(replay.exitCode, 0, replay.stderr);
  assert.match(replay.stdout, /"hard": 102400/);
});

test('analyzeContext applies the settings agent model (library use)', () => {
  const settings = resolveSettings({ flags: { agentModel: SONNET }, env: {} });
  const session = analyzeContext({ transcript: { entries: [] }, tokens: [], settings });
  assert.deepEqual([session.context.model, session.context.window, session.limits.hard, session.limits.source], [SONNET, 200_000, 160_000, 'model']);
});

// ---------------------------------------------------------------------------------------------
// OpenHands

function run(extra: { llmConfig?: object; responseModel?: string }): unknown {
  const response = {
    id: 'r1',
    object: 'chat.completion',
    ...(extra.responseModel !== undefined ? { model: extra.responseModel } : {}),
    choices: [
      { message: { role: 'assistant', content: 'Looking.', tool_calls: [{ id: 'c1', function: { name: 'execute_bash', arguments: '{"command":"ls"}' } }] } },
    ],
    usage: { prompt_tokens: 900, completion_tokens: 10 },
  };
  const metadata = { tool_call_id: 'c1', function_name: 'execute_bash', model_response: response, total_calls_in_response: 1 };
  return {
    instance_id: 'x-1',
    instruction: 'Fix it.',
    metadata: { agent_class: 'CodeActAgent', ...(extra.llmConfig ? { llm_config: extra.llmConfig } : {}) },
    history: [
      { id: 0, source: 'user', action: 'message', args: { content: 'Fix it.' } },
      { id: 1, source: 'agent', action: 'run', args: { command: 'ls' }, tool_call_metadata: metadata },
      { id: 2, source: 'agent', observation: 'run', content: 'a.txt', cause: 1, tool_call_metadata: metadata },
    ],
    metrics: {},
  };
}

test('openhands: the model comes from the last model_response, else metadata.llm_config.model; max_input_tokens is the window', () => {
  const fixture = openhandsAdapter.read(fixtureDoc('openhands', 'one-run-tool-calls-and-usage.jsonl'));
  assert.deepEqual(fixture.model, { agent: 'openhands', id: 'm' });

  const served = openhandsAdapter.read(inlineDoc(run({ llmConfig: { model: 'litellm_proxy/sonnet' }, responseModel: SONNET })));
  assert.equal(served.model?.id, SONNET, 'what the provider served beats the routing name');
  assert.equal(modelWindow(served.model)?.window, 200_000);

  const configured = openhandsAdapter.read(inlineDoc(run({ llmConfig: { model: `anthropic/${SONNET}` } })));
  assert.equal(configured.model?.id, `anthropic/${SONNET}`);
  assert.deepEqual(
    [modelWindow(configured.model)?.window, modelWindow(configured.model)?.source],
    [200_000, 'model'],
    'a LiteLLM provider prefix is looked up without it',
  );

  const limited = openhandsAdapter.read(inlineDoc(run({ llmConfig: { model: `anthropic/${SONNET}`, max_input_tokens: 120_000 } })));
  assert.deepEqual([modelWindow(limited.model)?.window, modelWindow(limited.model)?.source], [120_000, 'recorded']);

  const none = openhandsAdapter.read(inlineDoc(run({})));
  assert.deepEqual(none.model, { agent: 'openhands' });
  assert.equal(modelWindow(none.model), undefined);
});

test('catalog: a LiteLLM-style id is found by its model name', () => {
  assert.equal(catalogWindow(`anthropic/${SONNET}`), 200_000);
  assert.equal(catalogWindow('openrouter/openai/gpt-4o'), 128_000);
  assert.equal(catalogWindow('someone/no-such-model-xyz'), undefined);
});

test('realdata: the OpenHands run names its model (model_response), which the catalog does not size', { skip: realdataSkip }, () => {
  const path = join(realdataDir, 'trajectories/openhands/multi_swe_bench_output.jsonl');
  const t = openhandsAdapter.read(parseDocument(readFileSync(path), { path }));
  assert.equal(t.model?.id, 'meta-llama/llama-4-maverick');
  assert.equal(t.model?.agent, 'openhands');
  assert.equal(modelWindow(t.model), undefined, 'no window in the catalog: the limits stay the defaults');
  const { report } = analyzeJson([path]);
  assert.equal(report.context.model, 'meta-llama/llama-4-maverick');
  assert.equal(report.limits.source, 'default');
  // Naming it again with the flag changes nothing the catalog does not know; a known model sizes it.
  const flagged = analyzeJson([path, '--agent-model', 'gpt-4o']).report;
  assert.deepEqual([flagged.context.window, flagged.limits.source], [128_000, 'model']);
});
