import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CoordinatorOutcome, Engine } from '../../../src/engine/index';
import { FAKE_CLAUDE, config, readTrace, killQuietly, waitFor, withWorkerEnv } from '../../fixtures/executor/harness';
import { ensureCliBuilt, runCli } from '../../support/cli';
import { EngineFixture } from '../../support/engineFixture';
import { initRepo, show } from '../../support/gitRepo';

/**
 * Agent presets through the coordinator, with a stand-in for Claude Code that writes the real
 * CLI's stream-json line types (test/fixtures/workers/fakeClaude.js): live activity in the
 * heartbeats, usage and cost per attempt, the result from the final message, prompt
 * provenance, budgets that stop work, the permission policy, sessions a retry continues. The
 * real CLIs against a scripted model server: test/system/agents/realClis.test.ts.
 */
describe('agent attempts: live activity, usage, budgets, permissions, provenance', function () {
  this.timeout(120_000);
  let fixture: EngineFixture;
  let engine: Engine;
  let claude: string;
  let callLog: string;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
    claude = join(fixture.workspace, 'bin', 'claude');
    fixture.write('bin/.keep', '');
    copyFileSync(FAKE_CLAUDE, claude);
    chmodSync(claude, 0o755);
    callLog = join(fixture.workspace, 'claude-calls.jsonl');
  });
  afterEach(async () => {
    for (const line of readTrace(join(fixture.workspace, 'trace.txt')))
      if (line.kind === 'start') killQuietly(line.pid, fixture.workspace);
    await fixture.dispose();
  });

  function setUp(extra: Record<string, unknown>, planText: string): void {
    const { workers, ...rest } = extra as { workers?: Record<string, unknown> };
    fixture.write(
      '.baton/config.json',
      config({
        defaultWorker: 'claude',
        workers: { claude: { type: 'claude-code', executable: claude }, ...workers },
        ...rest,
      }),
    );
    fixture.write('plan.md', planText);
  }

  const task = (id: string, fields: string[] = []): string =>
    ['```baton-task', `id: ${id}`, 'agent: coder', ...fields, '```', `Do ${id}.`, ''].join('\n');

  async function drive(runId: string): Promise<CoordinatorOutcome> {
    const taken = await engine.coordinate({ runId });
    assert.ok('coordinator' in taken, 'the lease is free');
    return taken.coordinator.run();
  }

  /** The stand-in works slowly (two 30 s steps) unless it continues a session: then it finishes at once. */
  const slowUntilResumed = () => ({
    FAKE_CLAUDE_STEPS: '2',
    FAKE_CLAUDE_STEP_MS: '30000',
    FAKE_CLAUDE_RESUMED_STEP_MS: '0',
    FAKE_CLAUDE_LOG: callLog,
  });

  function calls(): Array<{ argv: string[] }> {
    return readFileSync(callLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[] });
  }

  it('shows what the agent does in its heartbeats while it works, then records its usage, cost and session', async () => {
    setUp({}, task('A'));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const seen = new Set<string>();
    const env = { FAKE_CLAUDE_STEPS: '4', FAKE_CLAUDE_STEP_MS: '700', FAKE_CLAUDE_COST: '0.01' };
    const outcome = await withWorkerEnv(env, async () => {
      const driving = drive(run.id);
      // While it runs, the runtime's progress names the tool call in flight and how far the agent got.
      await waitFor(
        'two different activity beats',
        async () => {
          const view = await engine.overview(run.id);
          for (const rt of view.runtimes) if (rt.progress) seen.add(rt.progress);
          return [...seen].filter((p) => /^Write notes-A-\d\.md · \d+ turns?, \d+ tool calls?$/.test(p)).length >= 2;
        },
        60_000,
      );
      return driving;
    });
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
    const view = await engine.overview(run.id);
    const usage = view.usage.find((u) => u.delegationId === 'D-A-coder-001');
    assert.ok(usage, 'usage recorded for the attempt');
    assert.equal(usage.kind, 'claude-code');
    assert.match(usage.sessionId ?? '', /^fake-session-\d+$/);
    assert.equal(usage.model, 'claude-fake-1');
    assert.deepEqual([usage.inputTokens, usage.outputTokens], [4000, 800], "the result's totals, not the estimate");
    assert.equal(usage.costUsd, 0.04);
    assert.equal(usage.costSource, 'cli');
    assert.equal(usage.turns, 5);
    assert.equal(usage.toolCalls, 4);
    assert.equal(usage.permissions.profile, 'edit');
    const events = await engine.listEvents(run.id);
    const finished = events.find((e) => e.type === 'agent:usage');
    assert.ok(finished && finished.type === 'agent:usage');
    assert.equal(finished.data.costUsd, 0.04);
    // The heartbeats carried the activity; the final one is past the last tool call.
    const runtime = view.runtimes.find((r) => r.delegationId === 'D-A-coder-001')!;
    assert.ok(runtime.heartbeatCount >= 2, `beats: ${runtime.heartbeatCount}`);

    // What a person reads: status sums the spend; diagnose shows each attempt's agent, and the prompt digest.
    await engine.close();
    ensureCliBuilt();
    const status = await runCli(['status'], { cwd: fixture.workspace });
    assert.match(status.stdout, /Spent: 4,800 tokens, \$0\.0400 — by agent: coder 4,800, \$0\.0400/);
    const diagnose = await runCli(['diagnose'], { cwd: fixture.workspace });
    assert.match(
      diagnose.stdout,
      /D-A-coder-001\s+claude-code\s+edit\s+5\s+4\s+4,000\/800\s+\$0\.0400\s+fake-session-\d+/,
    );
    assert.match(diagnose.stdout, /D-A-coder-001\s+sha256 [0-9a-f]{64}/);
    const json = JSON.parse((await runCli(['status', '--json'], { cwd: fixture.workspace })).stdout) as {
      usageTotals: { run: { tokens: number; costUsd: number } };
    };
    assert.deepEqual([json.usageTotals.run.tokens, json.usageTotals.run.costUsd], [4800, 0.04]);
  });

  it('keeps the exact prompt with its digest and size, in the store and in an event', async () => {
    setUp({}, task('P'));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    const prompt = readFileSync(join(fixture.workspace, '.baton', 'runs', run.id, 'prompts', 'D-P-coder-001.md'));
    const digest = createHash('sha256').update(prompt).digest('hex');
    const delegation = (await engine.overview(run.id)).delegations[0]!;
    assert.deepEqual(delegation.prompt, { sha256: digest, bytes: prompt.length, truncated: false });
    const event = (await engine.listEvents(run.id)).find((e) => e.type === 'delegation:prompt');
    assert.ok(event && event.type === 'delegation:prompt');
    assert.deepEqual(
      { sha256: event.data.sha256, bytes: event.data.bytes, truncated: event.data.truncated },
      delegation.prompt,
    );
  });

  it('warns on a PASS whose stream shows a failed test nothing ran again and edits after it: taken, not rejected', async () => {
    setUp({}, task('W'));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv({ FAKE_CLAUDE_FAILED_TEST: '1' }, () => drive(run.id));
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' }, 'warnings do not reject the result');
    const [ingestion] = await engine.listIngestions(run.id);
    const warnings = ingestion!.issues.map((i) => `${i.severity} ${i.code}: ${i.message}`);
    assert.deepEqual(warnings, [
      'warning result.edit-after-tests: PASS, but the last edit (Write notes-W-1.md) came after the last test-like command (Bash: npm test): the tests did not see the final code.',
      'warning result.failure-not-retried: PASS, but Bash: npm test failed (Exit code 1) and nothing did it again with success.',
    ]);
    // On the result's status line, where the editor shows them.
    assert.ok(
      ingestion!.issues.every((i) => i.range?.start.line === 7),
      JSON.stringify(ingestion!.issues),
    );
  });

  it('stops an attempt that crosses the task budget mid-run, gates the task; approving raises the limit and the retry continues the session', async () => {
    setUp(
      {
        budget: { task: { tokens: 250 } },
        workers: { claude: { type: 'claude-code', executable: claude, continueSession: true } },
      },
      task('B'),
    );
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const env = { FAKE_CLAUDE_STEPS: '8', FAKE_CLAUDE_STEP_MS: '600', FAKE_CLAUDE_LOG: callLog };
    const first = await withWorkerEnv(env, () => drive(run.id));
    assert.equal(first.kind, 'paused');
    let view = await engine.overview(run.id);
    const gate = view.gates.find((g) => g.kind === 'budget');
    assert.ok(gate, 'a budget gate opened');
    assert.equal(gate.status, 'open');
    assert.match(gate.reason, /the task budget of 250 tokens is used up \(\d+ tokens spent\)/);
    assert.equal(view.delegations[0]!.status, 'CANCELLED', 'stopped, not failed: it does not use up an attempt');
    assert.equal(view.tasks[0]!.status, 'gated');
    // It was stopped mid-run: the stand-in never reached its result.
    const log = readFileSync(join(fixture.workspace, '.baton', 'runs', run.id, 'logs', 'D-B-coder-001.log'), 'utf8');
    assert.doesNotMatch(log, /"type":"result"/);
    const session = view.usage[0]!.sessionId!;

    await engine.decideGate({ gateId: gate.id, decision: 'approved', by: 'tester' });
    const second = await withWorkerEnv({ ...env, FAKE_CLAUDE_STEPS: '1' }, () => drive(run.id));
    assert.deepEqual(second, { kind: 'finished', status: 'completed' });
    view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-B-coder-001:CANCELLED', 'D-B-coder-002:COMPLETED'],
    );
    const resumed = calls()[1]!.argv;
    assert.deepEqual(resumed.slice(resumed.indexOf('--resume'), resumed.indexOf('--resume') + 2), [
      '--resume',
      session,
    ]);
  });

  it('a stream silent past silenceSeconds with silenceAction stop is parked, not failed; the next attempt continues its session', async () => {
    setUp({ silenceSeconds: 1, silenceAction: 'stop', maxAttempts: 1 }, task('S'));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv(slowUntilResumed(), () => drive(run.id));
    const view = await engine.overview(run.id);
    const events = await engine.listEvents(run.id);
    const explain = JSON.stringify({ outcome, delegations: view.delegations, events: events.map((e) => e.type) });
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' }, explain);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-S-coder-001:CANCELLED', 'D-S-coder-002:COMPLETED'],
      explain,
    );
    assert.match(view.delegations[0]!.reason!, /^parked: its stream was silent/);
    const silent = events.find((e) => e.type === 'attempt:silent');
    assert.ok(silent?.type === 'attempt:silent' && silent.data.action === 'stop', explain);
    const parked = events.find((e) => e.type === 'attempt:parked');
    assert.ok(parked?.type === 'attempt:parked' && parked.data.cause === 'silence', explain);
    const resumed = calls()[1]!.argv;
    assert.deepEqual(resumed.slice(resumed.indexOf('--resume'), resumed.indexOf('--resume') + 2), [
      '--resume',
      view.usage[0]!.sessionId!,
    ]);
  });

  it('a follow-up message ends a running attempt and continues its session with the message first; one to the finished task runs again and integrates on top', async () => {
    // maxAttempts 1: neither the ended attempt nor the follow-ups are charged as failure retries.
    setUp({ maxAttempts: 1, isolation: 'worktree' }, task('F'));
    fixture.write('.gitignore', 'claude-calls.jsonl\n');
    initRepo(fixture.workspace, {});
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    // The first attempt works slowly; an attempt that continues its session finishes at once.
    const env = { ...slowUntilResumed(), FAKE_CLAUDE_WRITES: '1' };
    const first = await withWorkerEnv(env, async () => {
      const driving = drive(run.id);
      await waitFor(
        'the first attempt at work',
        async () =>
          (await engine.overview(run.id)).runtimes.some((rt) => /^Write notes-F-1\.md/.test(rt.progress ?? '')),
        60_000,
      );
      const sent = await engine.sendFollowUp({ runId: run.id, taskId: 'F', message: 'Use tabs.', by: 'tester' });
      assert.equal(sent.action, 'interrupt');
      assert.equal(sent.interrupted?.endedBy, 'coordinator');
      return driving;
    });
    const prompts = join(fixture.workspace, '.baton', 'runs', run.id, 'prompts');
    let view = await engine.overview(run.id);
    const explain = JSON.stringify({ first, delegations: view.delegations });
    assert.deepEqual(first, { kind: 'finished', status: 'completed' }, explain);
    assert.match(view.delegations[0]!.reason!, /^follow-up: tester sent a message/, explain);
    const session = view.usage.find((u) => u.delegationId === 'D-F-coder-001')!.sessionId!;
    assert.ok(
      readFileSync(join(prompts, 'D-F-coder-002.md'), 'utf8').startsWith('## Message from tester\n\nUse tabs.\n'),
    );
    assert.equal(show(fixture.workspace, 'main', 'notes-F-1.md'), 'D-F-coder-002\nmessage: Use tabs.\n');

    // The finished task (and its finished run) takes a second message: a follow-up attempt, integrated on top.
    const reopened = await engine.sendFollowUp({ runId: run.id, taskId: 'F', message: 'Add a heading.', by: 'tester' });
    assert.deepEqual([reopened.action, reopened.runStatus], ['reopen', 'running']);
    const second = await withWorkerEnv(env, () => drive(run.id));
    assert.deepEqual(second, { kind: 'finished', status: 'completed' });
    view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}${d.followUp ? ' (follow-up)' : ''}`),
      ['D-F-coder-001:CANCELLED', 'D-F-coder-002:COMPLETED (follow-up)', 'D-F-coder-003:COMPLETED (follow-up)'],
    );
    const prompt = readFileSync(join(prompts, 'D-F-coder-003.md'), 'utf8');
    assert.ok(prompt.startsWith('## Message from tester\n\nAdd a heading.\n'), prompt);
    assert.doesNotMatch(
      prompt,
      /Use tabs|What went wrong before/,
      'the passed follow-up and its ended attempt are done',
    );
    // Both follow-ups continued the first attempt's session.
    for (const call of calls().slice(1)) {
      const argv = call.argv;
      assert.deepEqual(argv.slice(argv.indexOf('--resume'), argv.indexOf('--resume') + 2), ['--resume', session]);
    }
    // On top: the second follow-up's worktree started from the first one's integration, and moved main past it.
    assert.equal(show(fixture.workspace, 'main', 'notes-F-1.md'), 'D-F-coder-003\nmessage: Add a heading.\n');
    const integrations = (await engine.listEvents(run.id)).filter((e) => e.type === 'integration:done');
    assert.equal(integrations.length, 2);
    const events = (await engine.listEvents(run.id)).filter((e) => e.type === 'attempt:follow-up');
    assert.deepEqual(
      events.map((e) => e.type === 'attempt:follow-up' && [e.data.delegationId, e.data.by, e.data.sessionId]),
      [
        ['D-F-coder-002', ['tester'], session],
        ['D-F-coder-003', ['tester'], session],
      ],
    );

    // The CLI: who sent what, in the timeline and in status; a message to the finished task from the command line.
    await engine.close();
    ensureCliBuilt();
    const cli = (args: string[]) => runCli(args, { cwd: fixture.workspace, env: { BATON_USER: 'tester' } });
    const timeline = (await cli(['events'])).stdout;
    assert.match(
      timeline,
      /tester sent F a message; its running attempt D-F-coder-001 ends and the next continues with it: "Use tabs\."/,
    );
    assert.match(timeline, /D-F-coder-003 is a follow-up with tester's message, in session fake-session-\d+/);
    assert.match((await cli(['status'])).stdout, /M-1\s+F\s+tester\s+\S.*\s+D-F-coder-002\s+Use tabs\./);
    const sent = await cli(['message', 'F', 'Polish.']);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(
      sent.stdout,
      `Message M-3 from tester to F: the finished task runs again as a follow-up attempt (run ${run.id} is running).\nContinue with: baton resume --run ${run.id}\n`,
    );
  });

  it('rejecting a budget gate fails the task; a run already over its budget starts nothing', async () => {
    setUp({ budget: { run: { usd: 0.01 } } }, [task('R1'), task('R2', ['depends: [R1]'])].join('\n'));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    // R1 costs $0.01 (the stand-in prices it at the end): the run's budget is used up, R2 must not start.
    const outcome = await withWorkerEnv({ FAKE_CLAUDE_COST: '0.01', FAKE_CLAUDE_LOG: callLog }, () => drive(run.id));
    assert.equal(outcome.kind, 'paused');
    const view = await engine.overview(run.id);
    assert.equal(view.tasks.find((t) => t.id === 'R1')!.status, 'completed');
    const gate = view.gates.find((g) => g.kind === 'budget' && g.taskId === 'R2');
    assert.ok(gate, 'R2 waits at a budget gate');
    assert.match(gate.reason, /not started: the run budget of \$0\.0100 is used up/);
    assert.equal(calls().length, 1, 'R2 was never dispatched');
    await engine.decideGate({ gateId: gate.id, decision: 'rejected', by: 'tester' });
    const after = await engine.overview(run.id);
    assert.equal(after.tasks.find((t) => t.id === 'R2')!.status, 'failed');
  });

  it('holds a task whose profile the policy forbids at a gate; once approved it runs with that profile', async () => {
    setUp(
      { permissionPolicy: { forbidForRisk: { prod: ['full'] } } },
      [task('F', ['permissions: full', 'risk: [prod]']), task('E', ['permissions: full'])].join('\n'),
    );
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const first = await withWorkerEnv({ FAKE_CLAUDE_LOG: callLog }, () => drive(run.id));
    assert.equal(first.kind, 'paused');
    let view = await engine.overview(run.id);
    const gate = view.gates.find((g) => g.taskId === 'F' && g.kind === 'risk_approval');
    assert.ok(gate, 'F waits at a gate');
    assert.match(
      gate.reason,
      /asks for the full permission profile, but the permission policy forbids the full profile for tasks tagged prod/,
    );
    assert.equal(view.tasks.find((t) => t.id === 'E')!.status, 'completed', 'E (no risk tag) ran');
    assert.equal(calls().length, 1);

    await engine.decideGate({ gateId: gate.id, decision: 'approved', by: 'tester' });
    assert.deepEqual(await withWorkerEnv({ FAKE_CLAUDE_LOG: callLog }, () => drive(run.id)), {
      kind: 'finished',
      status: 'completed',
    });
    view = await engine.overview(run.id);
    assert.equal(view.usage.find((u) => u.taskId === 'F')!.permissions.profile, 'full');
    const argv = calls()[1]!.argv;
    assert.deepEqual(argv.slice(argv.indexOf('--allowedTools'), argv.indexOf('--allowedTools') + 2), [
      '--allowedTools',
      'Bash',
    ]);
  });
});
