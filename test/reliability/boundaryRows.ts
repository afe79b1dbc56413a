/**
 * Rows of the fault matrix for the workspace boundary (issue 15, items 6, 7 and 9): links a
 * worker plants under .baton/runs/<run>/, a config a worker rewrites, and results handed in
 * without the attempt's credential. Each returns trials and failures; the matrix (matrix.ts) runs them.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../../src/engine/index';
import { ChildCoordinator, FAKE_CLAUDE, plan, waitFor, withWorkerEnv } from '../fixtures/executor/harness';
import { ensureCliBuilt, makeWorkspace, removeWorkspace, runCli, writeFile } from '../support/cli';
import { EngineFixture } from '../support/engineFixture';
import { FakeClock } from '../support/fakeClock';
import { initRepo } from '../support/gitRepo';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../support/postgresCluster';
import { processesCarrying } from '../support/processes';
import { makeTempDir } from '../support/tempDir';
import type { RowOutcome } from './matrix';
import { hostPid } from '../support/pidToken';

const PLANTER = resolve(__dirname, '../fixtures/workers/linkPlanter.js');

/** Where a worker plants, and how the next task's worker hands in its result. */
const TRAPS: Array<{
  name: string;
  at: string;
  kind: 'link' | 'hardlink' | 'fifo';
  to?: 'victim' | 'folder' | 'new';
  mode?: 'stdout';
  verify?: boolean;
}> = [
  { name: 'prompt link', at: 'prompts/D-T2-coder-001.md', kind: 'link', to: 'victim' },
  { name: 'log link', at: 'logs/D-T2-coder-001.log', kind: 'link', to: 'victim' },
  { name: 'log hard link', at: 'logs/D-T2-coder-001.log', kind: 'hardlink', to: 'victim' },
  { name: 'prompts folder link', at: 'prompts', kind: 'link', to: 'folder' },
  { name: 'logs folder link', at: 'logs', kind: 'link', to: 'folder' },
  { name: 'prompt FIFO', at: 'prompts/D-T2-coder-001.md', kind: 'fifo' },
  { name: 'artifact copy link', at: 'artifacts/D-T2-coder-001.md', kind: 'link', to: 'new', mode: 'stdout' },
  { name: 'verify log link', at: 'logs/D-T2-coder-001.verify.log', kind: 'link', to: 'victim', verify: true },
];

/** Row H5: a worker plants links where Baton writes the next task's files; nothing is written outside. */
export async function plantedLinks(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let trial = 0; trial < trials; trial++) {
    const trap = TRAPS[trial % TRAPS.length]!;
    const workspace = makeTempDir('baton-planted-');
    const outside = makeTempDir('baton-outside-');
    const victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const to = trap.to === 'victim' ? victim : trap.to === 'folder' ? outside : join(outside, 'new.md');
    let engine: Engine | undefined;
    try {
      writeFileSync(
        join(workspace, 'plan.md'),
        plan([
          { id: 'T1', worker: 'planter' },
          { id: 'T2', depends: ['T1'], ...(trap.verify ? { verify: [[process.execPath, '-e', '0']] } : {}) },
        ]),
      );
      const configDir = join(workspace, '.baton');
      mkdirSync(configDir, { recursive: true });
      writeFileSync(
        join(configDir, 'config.json'),
        JSON.stringify({
          defaultWorker: 'next',
          workers: {
            planter: { type: 'process', command: process.execPath, args: [PLANTER, '{taskId}', 'plant'] },
            next: { type: 'process', command: process.execPath, args: [PLANTER, '{taskId}', trap.mode ?? 'pass'] },
          },
          maxAttempts: 1,
          retryBackoffSeconds: 0,
        }),
      );
      engine = await Engine.open({ workspace, follow: true });
      const { run } = await engine.runForPlan('plan.md');
      await withWorkerEnv({ PLANT: JSON.stringify([{ at: trap.at, kind: trap.kind, to }]) }, async () => {
        const taken = await engine!.coordinate({ runId: run.id });
        if (!('coordinator' in taken)) throw new Error('the lease was not free');
        return taken.coordinator.run();
      });
      const view = await engine.overview(run.id);
      const t2 = view.tasks.find((t) => t.id === 'T2');
      if (t2?.status === 'completed') failures.push(`trial ${trial} (${trap.name}): T2 completed through the trap`);
      if (readFileSync(victim, 'utf8') !== 'precious\n')
        failures.push(`trial ${trial} (${trap.name}): the victim was written`);
      const left = readdirSync(outside).sort().join(',');
      if (left !== 'victim.txt') failures.push(`trial ${trial} (${trap.name}): outside holds ${left}`);
      seen.set(trap.name, (seen.get(trap.name) ?? 0) + 1);
    } catch (err) {
      failures.push(`trial ${trial} (${trap.name}): ${(err as Error).message}`);
    } finally {
      await engine?.close();
      rmSync(workspace, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  }
  return {
    trials,
    failures,
    note: [...seen].map(([name, n]) => `${name} ×${n}`).join(', '),
  };
}

/** Row H6: results handed in without the attempt's token, with another's, and after its lease ran out. */
export async function forgedIngest(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const workspace = makeTempDir('baton-forged-');
    const clock = new FakeClock();
    const engine = await Engine.open({ workspace, clock });
    try {
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'A' }, { id: 'B' }]));
      const a = await engine.claimTask({ planPath: 'plan.md', taskId: 'A', leaseSeconds: 30 });
      const b = await engine.claimTask({ runId: a.runId, taskId: 'B', leaseSeconds: 30 });
      const artifact = join(workspace, 'forged.md');
      writeFileSync(
        artifact,
        '```baton-result\ncontract: baton-result-v1\ntask: A\nagent: coder\nstatus: PASS\nsummary: forged\nartifacts: []\n```\n',
      );
      const attempt = (token?: string) =>
        engine
          .ingest({
            runId: a.runId,
            delegationId: a.delegation.id,
            artifactPath: artifact,
            ...(token ? { token } : {}),
          })
          .then(
            () => 'accepted',
            (err: { code?: string }) => err.code ?? 'error',
          );
      const none = await attempt();
      if (none !== 'ingest.token-required') failures.push(`trial ${trial}: without a token: ${none}`);
      const other = await attempt(b.token);
      if (other !== 'runtime.wrong-token') failures.push(`trial ${trial}: with B's token: ${other}`);
      clock.advance(31_000);
      const late = await attempt(a.token);
      if (late !== 'runtime.lease-expired') failures.push(`trial ${trial}: after the lease: ${late}`);
      const view = await engine.overview(a.runId);
      const status = view.delegations.find((d) => d.id === a.delegation.id)?.status;
      if (status !== 'STALE') failures.push(`trial ${trial}: A is ${status}, want STALE`);
    } finally {
      await engine.close();
      rmSync(workspace, { recursive: true, force: true });
    }
  }
  return {
    trials,
    failures,
    note: 'per trial: no token, another attempt’s token, the right token after the lease ran out',
  };
}

const TAMPERER = resolve(__dirname, '../fixtures/workers/configTamperer.js');

/** How a worker rewrites .baton/config.json (test/fixtures/workers/configTamperer.js), and what the gate must name. */
const TAMPERS: Array<{ kind: string; names: RegExp }> = [
  { kind: 'command', names: /worker "next": `.*pass` → `.*marker`; env keys added: STOLEN_TOKEN/ },
  { kind: 'args', names: /worker "next": `.*pass` → `.*marker`/ },
  { kind: 'env', names: /worker "next": `[^`]*pass`; env keys added: TAMPER_MODE/ },
  { kind: 'new-default', names: /default worker: "next" → "evil"; new worker "evil"/ },
];

/**
 * Row H9: task T1's worker rewrites .baton/config.json so that T2's worker runs another command
 * (which writes a marker). The changed command never runs before a person decides; the gate
 * names the change without env values; approve runs it, reject keeps the frozen one.
 */
export async function configTampered(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let trial = 0; trial < trials; trial++) {
    const tamper = TAMPERS[trial % TAMPERS.length]!;
    const approve = Math.floor(trial / TAMPERS.length) % 2 === 0;
    const name = `${tamper.kind} ${approve ? 'approved' : 'rejected'}`;
    const workspace = makeTempDir('baton-config-tamper-');
    const marker = join(workspace, 'MARKER-T2');
    let engine: Engine | undefined;
    try {
      const worker = (mode: string) => ({
        type: 'process',
        command: process.execPath,
        args: [TAMPERER, '{taskId}', mode],
      });
      writeFileSync(
        join(workspace, 'plan.md'),
        plan([
          { id: 'T1', worker: 'tamper' },
          { id: 'T2', depends: ['T1'] },
        ]),
      );
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(
        join(workspace, '.baton', 'config.json'),
        JSON.stringify({
          defaultWorker: 'next',
          workers: { tamper: worker('tamper'), next: worker('pass') },
          maxAttempts: 1,
          retryBackoffSeconds: 0,
        }),
      );
      engine = await Engine.open({ workspace, follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const drive = () =>
        withWorkerEnv({ TAMPER: JSON.stringify({ kind: tamper.kind, worker: 'next' }) }, async () => {
          const taken = await engine!.coordinate({ runId: run.id });
          if (!('coordinator' in taken)) throw new Error('the lease was not free');
          return taken.coordinator.run();
        });
      const first = await drive();
      const open = await engine.listGates({ runId: run.id, status: 'open' });
      if (first.kind !== 'paused') failures.push(`trial ${trial} (${name}): the run did not pause (${first.kind})`);
      if (existsSync(marker)) failures.push(`trial ${trial} (${name}): the changed command ran before any decision`);
      const gate = open.find((g) => g.kind === 'config_changed');
      if (!gate) {
        failures.push(`trial ${trial} (${name}): no config_changed gate (${open.map((g) => g.kind).join(', ')})`);
        continue;
      }
      if (!tamper.names.test(gate.reason))
        failures.push(`trial ${trial} (${name}): the gate does not name it: ${gate.reason}`);
      const logged = JSON.stringify(await engine.listEvents(run.id));
      if (/secret-value/.test(gate.reason + logged)) failures.push(`trial ${trial} (${name}): an env value was shown`);
      await engine.decideGate({ gateId: gate.id, decision: approve ? 'approved' : 'rejected', note: 'matrix' });
      const second = await drive();
      const t2 = (await engine.overview(run.id)).tasks.find((t) => t.id === 'T2');
      if (second.kind !== 'finished' || t2?.status !== 'completed')
        failures.push(
          `trial ${trial} (${name}): after the decision the run ended ${JSON.stringify(second)}, T2 ${t2?.status}`,
        );
      if (approve !== existsSync(marker))
        failures.push(
          `trial ${trial} (${name}): the changed command ${approve ? 'did not run' : 'ran'} after the decision`,
        );
      const gates = await engine.listGates({ runId: run.id });
      if (gates.filter((g) => g.kind === 'config_changed').length !== 1)
        failures.push(`trial ${trial} (${name}): ${gates.length} config gates (asked again?)`);
      seen.set(name, (seen.get(name) ?? 0) + 1);
    } catch (err) {
      failures.push(`trial ${trial} (${name}): ${(err as Error).message}`);
    } finally {
      await engine?.close();
      rmSync(workspace, { recursive: true, force: true });
    }
  }
  return { trials, failures, note: [...seen].map(([name, n]) => `${name} ×${n}`).join(', ') };
}

const EDIT_WORKER = resolve(__dirname, '../fixtures/workers/editWorker.js');

/** Every hook git runs for the commands an integration issues (commit, merge, checkout, rebase, ref updates, gc). */
const HOOKS = [
  'pre-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-merge-commit',
  'post-merge',
  'post-checkout',
  'pre-rebase',
  'post-rewrite',
  'reference-transaction',
  'pre-auto-gc',
];

/**
 * Issue 25, items 2.5, 2.6 and 2.8: the shared `.git` of a repository whose tasks run in worktrees holds hooks (every
 * kind), and T1's worker, from its worktree, sets `core.fsmonitor` to a program and `core.worktree` to a folder outside
 * in the shared config. Then Baton snapshots, commits and fast-forwards T1's work, adds T2's worktree and integrates
 * it. Nothing planted runs (no marker appears), nothing reaches the folder outside, and both tasks are integrated into
 * the repository's own working tree. Returns what went wrong (empty: the guarantee held).
 */
export async function hostileRepository(): Promise<string[]> {
  const workspace = makeTempDir('baton-hostile-git-');
  const outside = makeTempDir('baton-outside-');
  const markers = join(outside, 'markers');
  const foreignTree = join(outside, 'tree');
  mkdirSync(markers);
  mkdirSync(foreignTree);
  let engine: Engine | undefined;
  try {
    writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'T1' }, { id: 'T2', depends: ['T1'] }]));
    mkdirSync(join(workspace, '.baton'));
    writeFileSync(
      join(workspace, '.baton', 'config.json'),
      JSON.stringify({
        defaultWorker: 'edit',
        workers: {
          edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true },
        },
        maxAttempts: 1,
        retryBackoffSeconds: 0,
        isolation: 'worktree',
      }),
    );
    initRepo(workspace, { 'README.md': '# demo\n' });
    const program = (name: string): string => `#!/bin/sh\necho ran > '${join(markers, name)}'\n`;
    for (const hook of HOOKS) writeFileSync(join(workspace, '.git', 'hooks', hook), program(hook), { mode: 0o755 });
    const fsmonitor = join(outside, 'fsmonitor');
    writeFileSync(fsmonitor, program('fsmonitor'), { mode: 0o755 });
    engine = await Engine.open({ workspace, follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv(
      {
        FAKE_EDITS: JSON.stringify({ T1: { 'a.txt': 'from T1\n' }, T2: { 'b.txt': 'from T2\n' } }),
        FAKE_GIT: JSON.stringify({
          T1: [
            ['config', 'core.fsmonitor', fsmonitor],
            ['config', 'core.worktree', foreignTree],
          ],
        }),
      },
      async () => {
        const taken = await engine!.coordinate({ runId: run.id });
        if (!('coordinator' in taken)) throw new Error('the lease was not free');
        return taken.coordinator.run();
      },
    );
    // Read before any git of the test's own runs: the test's git would obey the planted config.
    const ran = readdirSync(markers).sort();
    const reached = readdirSync(foreignTree).sort();
    const failures: string[] = [];
    if (ran.length > 0) failures.push(`Baton's git ran planted programs: ${ran.join(', ')}`);
    if (reached.length > 0) failures.push(`the folder core.worktree names received ${reached.join(', ')}`);
    if (outcome.kind !== 'finished' || outcome.status !== 'completed')
      failures.push(`the run ended ${JSON.stringify(outcome)}`);
    for (const file of ['a.txt', 'b.txt'])
      if (!existsSync(join(workspace, file))) failures.push(`${file} is not in the repository's working tree`);
    return failures;
  } finally {
    await engine?.close();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
}

/** Row H10: hooks, an fsmonitor program and a foreign core.worktree planted in the shared .git (hostileRepository). */
export async function hostileRepositoryRow(trials: number): Promise<RowOutcome> {
  return {
    trials,
    failures: await failuresOver(trials, hostileRepository),
    note: `${HOOKS.length} kinds of hook, core.fsmonitor, core.worktree; two tasks integrated`,
  };
}

/**
 * Issue 25, items 2.1–2.4 (row H11): links planted where Baton writes under `.baton/store/`, `.baton/worktrees/` and
 * `.git/info/` (the state a worker leaves; planted here directly, so one store serves every trap). Nothing outside
 * changes: the store replaces its own temp files and damaged mark, the exclude file is refused (told as a notice), a
 * linked worktrees/<run> is neither listed nor deleted through. Throws (assert) when a guarantee does not hold.
 */
export async function plantedStoreLinks(): Promise<void> {
  const fixture = new EngineFixture();
  const outside = makeTempDir('baton-outside-');
  try {
    const victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const folders = join(outside, 'folders');
    mkdirSync(join(folders, 'important'), { recursive: true });
    writeFileSync(join(folders, 'important', 'keep.txt'), 'keep\n');
    initRepo(fixture.workspace, { 'README.md': '# demo\n' });
    fixture.write('plan.md', plan([{ id: 'T1' }]));
    let engine = await fixture.open();
    const { run } = await engine.runForPlan('plan.md');
    await engine.close();

    const store = join(fixture.workspace, '.baton', 'store');
    rmSync(join(store, 'journal.mark'));
    symlinkSync(victim, join(store, 'journal.mark'));
    const exclude = join(fixture.workspace, '.git', 'info', 'exclude');
    rmSync(exclude);
    symlinkSync(victim, exclude);
    mkdirSync(join(fixture.workspace, '.baton', 'worktrees'), { recursive: true });
    symlinkSync(folders, join(fixture.workspace, '.baton', 'worktrees', run.id));

    // The mark is reset like a damaged one when the store opens.
    engine = await Engine.open({ workspace: fixture.workspace, store: { closeSnapshotMinBytes: 0 } });
    assert.match(engine.recoveryNotices.join('\n'), /journal mark .* is damaged/);
    // Planted while the store is open (it removes leftover temp files when it opens), as a running worker would.
    for (let n = 1; n <= 60; n++) {
      const snapshot = join(store, `snapshot-${String(n).padStart(12, '0')}.sqlite`);
      if (!existsSync(snapshot)) symlinkSync(victim, `${snapshot}.tmp`);
      if (!existsSync(`${snapshot}.sha256`)) symlinkSync(victim, `${snapshot}.sha256`);
    }
    // A commit, so that the snapshot on close has something new to write (through the planted temp names).
    await engine.claimTask({ runId: run.id, taskId: 'T1', leaseSeconds: 30 });
    // The exclude file is edited after the first commit: refused and told as a notice (the command goes on).
    assert.match(engine.recoveryNotices.join('\n'), /Refused to read .*info\/exclude: it is a link or not a file/);
    const report = await engine.reconcile(run.id);
    assert.ok(
      !report.entries.some((e) => /important/.test(JSON.stringify(e))),
      `reconcile looked through the link: ${JSON.stringify(report.entries)}`,
    );
    const cleanup = await engine.cleanupWorktrees(run.id);
    assert.ok(cleanup.removed.every((r) => !r.path.includes('important')));
    await engine.close();

    assert.equal(readFileSync(victim, 'utf8'), 'precious\n', 'nothing was written through a link');
    assert.equal(readFileSync(join(folders, 'important', 'keep.txt'), 'utf8'), 'keep\n', 'nothing was deleted');
    assert.ok(
      readdirSync(store).some((n) => /^snapshot-\d{12}\.sqlite$/.test(n)),
      'the snapshot on close was written',
    );
    assert.equal(lstatSync(join(store, 'journal.mark')).isFile(), true, 'the mark is a file of the store again');
  } finally {
    await fixture.dispose();
    rmSync(outside, { recursive: true, force: true });
  }
}

/** Row H11: plantedStoreLinks, again and again. */
export async function plantedStoreLinksRow(trials: number): Promise<RowOutcome> {
  return {
    trials,
    failures: await failuresOver(trials, async () => (await plantedStoreLinks(), [])),
    note: 'per trial: 60 snapshot .tmp and 60 .sha256 links, a journal.mark link, an info/exclude link, a linked worktrees/<run>',
  };
}

/**
 * Issue 25, items 3.1 and 3.2 (row H12): two workers each replace their own log — T1's with a FIFO, T2's with a link
 * to /dev/zero — print their result and exit. The coordinator reads neither (a FIFO is never opened blocking, a device
 * never read): both attempts fail without a result, the run ends, and this process grows by less than 256 MiB.
 * Returns what went wrong (empty: it held).
 */
export async function replacedLogs(): Promise<string[]> {
  const fixture = new EngineFixture({ realClock: true });
  try {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        workers: {
          planter: { type: 'process', command: process.execPath, args: [PLANTER, '{taskId}', 'plant-stdout'] },
        },
        defaultWorker: 'planter',
        maxAttempts: 1,
        retryBackoffSeconds: 0,
      }),
    );
    fixture.write('plan.md', plan([{ id: 'T1' }, { id: 'T2' }]));
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const traps = [
      { task: 'T1', at: 'logs/{self}.log', kind: 'fifo' },
      { task: 'T2', at: 'logs/{self}.log', kind: 'link', to: '/dev/zero' },
    ];
    const rssBefore = process.memoryUsage().rss;
    const outcome = await withWorkerEnv({ PLANT: JSON.stringify(traps) }, async () => {
      const taken = await engine.coordinate({ runId: run.id });
      if (!('coordinator' in taken)) throw new Error('the lease was not free');
      return taken.coordinator.run();
    });
    const grown = process.memoryUsage().rss - rssBefore;
    const failures: string[] = [];
    if (outcome.kind !== 'finished' || outcome.status !== 'failed')
      failures.push(`the run ended ${JSON.stringify(outcome)}`);
    const view = await engine.overview(run.id);
    for (const task of ['T1', 'T2']) {
      const attempt = view.delegations.find((d) => d.taskId === task);
      if (attempt?.status !== 'FAILED' || !/without a result/.test(attempt.reason ?? ''))
        failures.push(`${task}: ${attempt?.status} ${attempt?.reason}`);
    }
    if (grown >= 256 * 1024 * 1024) failures.push(`the coordinator grew by ${Math.round(grown / 1024 / 1024)} MiB`);
    return failures;
  } finally {
    await fixture.dispose();
  }
}

/** Row H12: replacedLogs, again and again. */
export async function replacedLogsRow(trials: number): Promise<RowOutcome> {
  return {
    trials,
    failures: await failuresOver(trials, replacedLogs),
    note: 'per trial: one log replaced by a FIFO, one by a link to /dev/zero',
  };
}

/**
 * Issue 25, items 3.3 and 3.4 (row H16): while its worker runs, a file its coordinator follows is replaced with a FIFO
 * nobody writes, and the worker works on for 3 s before it hands in. `stream`: the Claude Code stand-in
 * (test/fixtures/workers/fakeClaude.js) replaces its own log — the event stream the agent stream follower reads every
 * 250 ms — right after its first line; what it prints afterwards, its answer included, goes to the log it unlinked.
 * `relay`: on a PostgreSQL store, a worker replaces its heartbeat relay file (`relay/<delegation>.ndjson`, read by the
 * coordinator every 500 ms for the beats it commits) and then hands in a PASS. The coordinator is `baton start`, a
 * process of its own: a FIFO opened blocking would hold it in open(2) for good, its timers and its signals with it.
 * It must end the run well within 90 s (a quiet machine: a few seconds): `stream` fails its attempt without a result
 * (the answer was never in what Baton could read; exit 5), `relay` completes it (exit 0). The FIFO is still in place
 * afterwards (Baton never opened it blocking, nor wrote it). Returns what went wrong (empty: it held).
 */
export async function fifoWhileRunning(trap: 'stream' | 'relay', cluster?: PostgresCluster): Promise<string[]> {
  ensureCliBuilt();
  const ws = makeWorkspace(`baton-fifo-${trap}-`);
  try {
    const settings = { maxAttempts: 1, retryBackoffSeconds: 0, isolation: 'none' };
    let env: Record<string, string>;
    if (trap === 'stream') {
      const claude = writeFile(ws, 'bin/claude', readFileSync(FAKE_CLAUDE, 'utf8'));
      chmodSync(claude, 0o755);
      writeFile(
        ws,
        '.baton/config.json',
        JSON.stringify({
          ...settings,
          defaultWorker: 'claude',
          workers: { claude: { type: 'claude-code', executable: claude } },
        }),
      );
      env = { FAKE_CLAUDE_FIFO_LOG: '1', FAKE_CLAUDE_STEPS: '2', FAKE_CLAUDE_STEP_MS: '1500' };
    } else {
      if (!cluster) throw new Error('the relay trap needs a PostgreSQL cluster');
      writeFile(
        ws,
        '.baton/config.json',
        JSON.stringify({
          ...settings,
          store: { kind: 'postgres', schema: schemaFor(`${ws}-relay`) },
          defaultWorker: 'planter',
          workers: { planter: { type: 'process', command: process.execPath, args: [PLANTER, '{taskId}', 'plant'] } },
        }),
      );
      env = {
        BATON_STORE_URL: cluster.url,
        PLANT: JSON.stringify([{ at: 'relay/{self}.ndjson', kind: 'fifo' }]),
        PLANT_HOLD_MS: '3000',
      };
    }
    writeFile(ws, 'plan.md', plan([{ id: 'T1' }]));
    const failures: string[] = [];
    let started;
    try {
      started = await runCli(['start', 'plan.md', '--json'], { cwd: ws, env, timeoutMs: 90_000 });
    } catch (err) {
      return [`the coordinator did not end the run: ${(err as Error).message.split('\n')[0]}`];
    }
    const want = trap === 'stream' ? { code: 5, status: 'FAILED' } : { code: 0, status: 'COMPLETED' };
    if (started.code !== want.code) failures.push(`start: exit ${started.code}, ${started.stderr.trim()}`);
    const status = await runCli(['status', '--json'], { cwd: ws, env });
    const t1 = status
      .json<{ delegations: Array<{ id: string; status: string; reason?: string }> }>()
      .delegations.find((d) => d.id === 'D-T1-coder-001');
    if (t1?.status !== want.status || (trap === 'stream' && !/without a result/.test(t1.reason ?? '')))
      failures.push(`T1 is ${t1?.status} (${t1?.reason}), want ${want.status}`);
    const runId = status.json<{ run: { id: string } }>().run.id;
    const folder = trap === 'stream' ? 'logs/D-T1-coder-001.log' : 'relay/D-T1-coder-001.ndjson';
    const planted = join(ws, '.baton', 'runs', runId, folder);
    if (!existsSync(planted) || !lstatSync(planted).isFIFO())
      failures.push(`no FIFO at ${folder}: the trap was not set`);
    return failures;
  } finally {
    for (const pid of processesCarrying(`BATON_WORKSPACE=${ws}`)) process.kill(pid, 'SIGKILL');
    removeWorkspace(ws);
  }
}

/** Row H16: fifoWhileRunning, the stream (on the file store) and the relay (on PostgreSQL) in turn. */
export async function fifoWhileRunningRow(trials: number): Promise<RowOutcome> {
  const cluster = await sharedPostgresCluster();
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const trap = trial % 2 === 0 ? 'stream' : 'relay';
    try {
      failures.push(...(await fifoWhileRunning(trap, cluster)).map((f) => `trial ${trial} (${trap}): ${f}`));
    } catch (err) {
      failures.push(`trial ${trial} (${trap}): ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return {
    trials,
    failures,
    note: 'per trial: a FIFO planted while the worker runs, 3 s before it hands in; even trials a Claude Code worker’s log (its stream), odd ones the heartbeat relay file on PostgreSQL',
  };
}

/** Runs a scenario `trials` times; its failures (or what it threw), each with its trial's number. */
async function failuresOver(trials: number, scenario: () => Promise<string[]>): Promise<string[]> {
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    try {
      failures.push(...(await scenario()).map((f) => `trial ${trial}: ${f}`));
    } catch (err) {
      failures.push(`trial ${trial}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return failures;
}

const THIEF = resolve(__dirname, '../fixtures/workers/tokenThief.js');

/**
 * Issue 25, item 2.7 (row H13): T1's worker reads T2's runtime token from T2's worker's
 * /proc/<pid>/environ — or, in a PID namespace whose /proc shows no other worker, from the file
 * T2's worker leaked it into — and hands in a forged PASS for T2 with `baton ingest --token`, while T2's
 * worker waits; then T2's worker hands in its own result with the same token. The forged one is
 * refused (`runtime.not-its-worker`, exit 3, nothing recorded), the owner's accepted.
 */
export async function stolenToken(): Promise<string[]> {
  ensureCliBuilt();
  const ws = makeWorkspace('baton-thief-');
  try {
    writeFile(ws, 'plan.md', plan([{ id: 'T1', worker: 'thief' }, { id: 'T2' }]));
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'victim',
        workers: {
          thief: {
            type: 'process',
            command: process.execPath,
            args: [THIEF, '{taskId}', 'thief'],
            env: { VICTIM_TASK: 'T2' },
          },
          victim: { type: 'process', command: process.execPath, args: [THIEF, '{taskId}', 'victim'] },
        },
        maxAttempts: 1,
        maxConcurrency: 2,
      }),
    );
    const started = await runCli(['start', 'plan.md', '--json'], { cwd: ws });
    const failures: string[] = [];
    const read = (name: string): { code?: number; stderr?: string; stdout?: string; error?: string } =>
      existsSync(join(ws, name)) ? JSON.parse(readFileSync(join(ws, name), 'utf8')) : { error: `no ${name}` };
    const thief = read('thief-ingest.json');
    const refusal = thief.stdout ? JSON.parse(thief.stdout).error?.code : thief.error;
    if (thief.code !== 3 || refusal !== 'runtime.not-its-worker')
      failures.push(`the forged PASS: exit ${thief.code}, ${refusal ?? thief.stderr}`);
    if (started.code !== 0) failures.push(`start: exit ${started.code}, ${started.stderr.trim()}`);
    const t2 = (await runCli(['queue', '--json'], { cwd: ws }))
      .json()
      .delegations.find((d: { taskId: string }) => d.taskId === 'T2');
    if (t2?.status !== 'COMPLETED' || t2.artifactPath !== 'own-T2.md')
      failures.push(`T2 is ${t2?.status} with ${t2?.artifactPath}, want COMPLETED by its own hand-in (own-T2.md)`);
    const summaries = await runCli(['status', '--json'], { cwd: ws });
    if (summaries.stdout.includes('forged')) failures.push('status shows the forged summary');
    return failures;
  } finally {
    removeWorkspace(ws);
  }
}

/** Row H13: stolenToken, again and again. */
export async function stolenTokenRow(trials: number): Promise<RowOutcome> {
  return {
    trials,
    failures: await failuresOver(trials, stolenToken),
    note: "per trial: a token taken from another worker (its /proc/<pid>/environ where visible, else the file it leaked), its forged PASS, then the owner's own hand-in",
  };
}

const STOP_WORKER = resolve(__dirname, '../fixtures/workers/stopWorker.js');

/** A process as /proc shows it now: its start time, or undefined when it is gone (a zombie is). */
function startOf(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' || fields[0] === 'X' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/**
 * Issue 25, item 3.5 (row H15): a worker's daemon drops everything it can change — its launcher exits (a double
 * fork), it has a session of its own and an empty environment, and it resets the real-time limit the marker's tag
 * set — then `stop --mode immediate`: from this process while its coordinator drives the worker (even trials), or
 * with the coordinator SIGKILLed first, the stop applied by this process alone (odd trials). The stop is confirmed
 * only when the daemon (pid and start time) is gone.
 */
export async function hostileDaemon(trial: number): Promise<string[]> {
  const workspace = makeTempDir('baton-hostile-');
  const dir = join(workspace, 'stop');
  mkdirSync(dir);
  const failures: string[] = [];
  const leftovers: Array<{ pid: number; start: string }> = [];
  let engine: Engine | undefined;
  try {
    writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'A' }]));
    mkdirSync(join(workspace, '.baton'));
    writeFileSync(
      join(workspace, '.baton', 'config.json'),
      JSON.stringify({
        defaultWorker: 'hostile',
        stopGraceSeconds: 1,
        workers: {
          hostile: {
            type: 'process',
            command: process.execPath,
            args: [STOP_WORKER, '{taskId}', '{promptFile}'],
            env: { STOP_DIR: dir, STOP_BEHAVIOUR: JSON.stringify({ A: 'hostile' }) },
          },
        },
      }),
    );
    engine = await Engine.open({ workspace, follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const coordinated =
      trial % 2 === 0 ? await engine.coordinate({ runId: run.id }) : new ChildCoordinator(workspace, run.id, {});
    const running = 'coordinator' in coordinated ? coordinated.coordinator.run() : undefined;
    if (!running && !(coordinated instanceof ChildCoordinator)) throw new Error('no lease');
    const reported = join(dir, 'A.json');
    await waitFor('the worker and its daemon', () => existsSync(reported), 30_000);
    const report = JSON.parse(readFileSync(reported, 'utf8')) as { worker: string; pids: { hostile: string } };
    // As the worker named them, inside its PID namespace: mapped to the machine's pids while they run.
    const pids = { worker: hostPid(report.worker), pids: { hostile: hostPid(report.pids.hostile) } };
    for (const pid of [pids.worker, pids.pids.hostile]) {
      const start = startOf(pid);
      if (start) leftovers.push({ pid, start });
    }
    const daemon = leftovers.find((p) => p.pid === pids.pids.hostile);
    if (!daemon) return [`the daemon ${pids.pids.hostile} was not running when reported`];
    if (coordinated instanceof ChildCoordinator) {
      coordinated.kill('SIGKILL');
      await coordinated.exited;
    }
    const { request } = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'matrix', waitMs: 15_000 });
    await running;
    const confirmed = request.report.length === 1 && request.report.every((r) => r.confirmed);
    if (!confirmed) failures.push(`termination not confirmed: ${JSON.stringify(request.report)}`);
    if (startOf(daemon.pid) === daemon.start)
      failures.push(`the daemon ${daemon.pid} lives${confirmed ? ' while the stop reports it confirmed gone' : ''}`);
    return failures;
  } finally {
    for (const p of leftovers) if (startOf(p.pid) === p.start) process.kill(p.pid, 'SIGKILL');
    await engine?.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** Row H15: hostileDaemon, again and again. */
export async function hostileDaemonRow(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    try {
      failures.push(...(await hostileDaemon(trial)).map((f) => `trial ${trial}: ${f}`));
    } catch (err) {
      failures.push(`trial ${trial}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return {
    trials,
    failures,
    note: 'per trial: a daemon that double-forked, setsid, env -i and reset its real-time limit; even trials stop immediate under a live coordinator, odd ones with the coordinator SIGKILLed first',
  };
}
