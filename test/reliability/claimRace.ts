/**
 * Race rounds: K processes claim the same task of a fresh plan at the same moment. Each
 * round must end with exactly one winner, one run and one delegation; the losers get a
 * conflict. `npm run test:race` runs more rounds than `npm test`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { StoreSetting } from '../../src/engine/domain/config';
import { Engine } from '../../src/engine/index';
import { chooseStore, openStore } from '../../src/engine/store/openStore';
import { bundleScript } from '../support/bundleScript';
import { schemaFor } from '../support/postgresCluster';
import { makeTempDir } from '../support/tempDir';

export interface RaceOutcome {
  won: boolean;
  code?: string;
  runId?: string;
  delegationId?: string;
}

/** A long-lived racer process: one request, one answer line, in order. */
class Racer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  private buffered = '';
  private stderr = '';

  constructor(script: string, env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [script], { env });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.buffered += chunk;
      let newline: number;
      while ((newline = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        this.waiting.shift()?.resolve(line);
      }
    });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.child.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`racer exited ${code}: ${this.stderr.trim()}`));
    });
  }

  ask(command: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(`${command}\n`);
    });
  }

  stop(): void {
    this.child.stdin.end();
  }
}

/** `racers` racer processes, on the PostgreSQL server given or else the file store. */
function startRacers(options: { racers: number; postgresUrl?: string }): { env: NodeJS.ProcessEnv; racers: Racer[] } {
  const script = bundleScript('test/reliability/children/claimRacer.ts');
  const env = { ...process.env, ...(options.postgresUrl ? { BATON_STORE_URL: options.postgresUrl } : {}) };
  return { env, racers: Array.from({ length: options.racers }, () => new Racer(script, env)) };
}

export async function runClaimRace(options: {
  rounds: number;
  racers: number;
  /** Race on this PostgreSQL server (each round a schema of its own) instead of the file store. */
  postgresUrl?: string;
}): Promise<{ rounds: number; failures: string[] }> {
  const failures: string[] = [];
  const { env, racers } = startRacers(options);
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const workspace = makeTempDir('baton-race-');
      try {
        const plan = join(workspace, 'plan.md');
        const store: StoreSetting = options.postgresUrl
          ? { kind: 'postgres', schema: schemaFor(workspace) }
          : { kind: 'file' };
        if (options.postgresUrl) {
          mkdirSync(join(workspace, '.baton'));
          writeFileSync(join(workspace, '.baton', 'config.json'), JSON.stringify({ store }));
        }
        writeFileSync(
          plan,
          '```baton-task\nid: T1\nagent: coder\n```\nThe contested task.\n\n```baton-task\nid: T2\n```\nAnother.\n',
        );
        await Promise.all(racers.map((r) => r.ask(`open ${workspace}`)));
        const outcomes = (await Promise.all(racers.map((r) => r.ask(`go ${plan} T1`)))).map(
          (line) => JSON.parse(line) as RaceOutcome,
        );
        const winners = outcomes.filter((o) => o.won);
        if (winners.length !== 1) failures.push(`round ${round}: ${winners.length} winners`);
        for (const loser of outcomes.filter((o) => !o.won)) {
          if (loser.code !== 'task.already-claimed') failures.push(`round ${round}: a loser got ${loser.code}`);
        }
        const opened = await openStore(chooseStore(store, join(workspace, '.baton', 'store'), env), { follow: false });
        const counts = await opened.read(async (r) => ({
          runs: (await r.get<{ n: number }>('SELECT COUNT(*) AS n FROM runs'))!.n,
          delegations: (await r.get<{ n: number }>('SELECT COUNT(*) AS n FROM delegations'))!.n,
        }));
        await opened.close();
        if (counts.runs !== 1 || counts.delegations !== 1)
          failures.push(`round ${round}: ${counts.runs} runs and ${counts.delegations} delegations`);
      } finally {
        rmSync(workspace, { recursive: true, force: true });
      }
    }
  } finally {
    for (const r of racers) r.stop();
  }
  return { rounds: options.rounds, failures };
}

/**
 * Claim rounds within one run (issue 26): K processes, each with an engine open on the same store all along, claim the
 * same task of a run they name, at the same moment, round after round — the claim that runs beside other runs'
 * writers (WriteScope). Each round must have exactly one winner, whose attempt is the task's only one; the losers are
 * told the task is taken.
 */
export async function runRunClaimRace(options: {
  rounds: number;
  racers: number;
  postgresUrl?: string;
}): Promise<{ rounds: number; failures: string[] }> {
  const failures: string[] = [];
  const { env, racers } = startRacers(options);
  const workspace = makeTempDir('baton-run-race-');
  const store: StoreSetting = options.postgresUrl
    ? { kind: 'postgres', schema: schemaFor(workspace) }
    : { kind: 'file' };
  try {
    const plan = join(workspace, 'plan.md');
    const taskIds = Array.from({ length: options.rounds }, (_, i) => `T${i + 1}`);
    writeFileSync(
      plan,
      taskIds.map((id) => `\`\`\`baton-task\nid: ${id}\nagent: coder\n\`\`\`\nTask ${id}.\n`).join('\n'),
    );
    mkdirSync(join(workspace, '.baton'));
    // Every round's winner keeps its claim: the run holds them all.
    writeFileSync(join(workspace, '.baton', 'config.json'), JSON.stringify({ store, maxConcurrency: options.rounds }));
    const setup = await Engine.open({ workspace, env });
    const runId = (await setup.startRun(plan)).id;
    await setup.close();
    await Promise.all(racers.map((r) => r.ask(`open ${workspace}`)));
    for (const taskId of taskIds) {
      const outcomes = (await Promise.all(racers.map((r) => r.ask(`claim ${runId} ${taskId}`)))).map(
        (line) => JSON.parse(line) as RaceOutcome,
      );
      const winners = outcomes.filter((o) => o.won);
      if (winners.length !== 1) failures.push(`${taskId}: ${winners.length} winners`);
      for (const loser of outcomes.filter((o) => !o.won))
        if (loser.code !== 'task.already-claimed') failures.push(`${taskId}: a loser got ${loser.code}`);
    }
    await Promise.all(racers.map((r) => r.ask('close')));
    const opened = await openStore(chooseStore(store, join(workspace, '.baton', 'store'), env), { follow: false });
    const attempts = await opened.read((r) =>
      r.all<{ task_id: string; n: number; running: number }>(
        `SELECT task_id, COUNT(*) AS n, SUM(CASE WHEN status = 'RUNNING' THEN 1 ELSE 0 END) AS running
         FROM delegations WHERE run_id = ? GROUP BY task_id`,
        [runId],
      ),
    );
    await opened.close();
    if (attempts.length !== options.rounds)
      failures.push(`${attempts.length} tasks have attempts (want ${options.rounds})`);
    for (const a of attempts)
      if (a.n !== 1 || a.running !== 1) failures.push(`${a.task_id}: ${a.n} attempts, ${a.running} RUNNING`);
  } finally {
    for (const r of racers) r.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
  return { rounds: options.rounds, failures };
}

/**
 * Slot rounds (issue 15, item 17): K processes each claim a different task of a fresh plan at
 * the same moment, in a workspace with `maxConcurrency: 2`. Each round must end with exactly two
 * winners and two RUNNING attempts; the others are refused with `claim.max-concurrency`. The
 * limit is checked inside the claim's transaction, so no interleaving lets a third through.
 */
export async function runSlotRace(options: {
  rounds: number;
  racers: number;
}): Promise<{ rounds: number; failures: string[] }> {
  const failures: string[] = [];
  const { racers } = startRacers(options);
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const workspace = makeTempDir('baton-slots-');
      try {
        const plan = join(workspace, 'plan.md');
        writeFileSync(
          plan,
          racers.map((_, i) => `\`\`\`baton-task\nid: T${i + 1}\nagent: coder\n\`\`\`\nTask ${i + 1}.\n`).join('\n'),
        );
        mkdirSync(join(workspace, '.baton'), { recursive: true });
        writeFileSync(join(workspace, '.baton', 'config.json'), JSON.stringify({ maxConcurrency: 2 }));
        await Promise.all(racers.map((r) => r.ask(`open ${workspace}`)));
        const outcomes = (await Promise.all(racers.map((r, i) => r.ask(`go ${plan} T${i + 1}`)))).map(
          (line) => JSON.parse(line) as RaceOutcome,
        );
        const winners = outcomes.filter((o) => o.won);
        if (winners.length !== 2) failures.push(`round ${round}: ${winners.length} winners (want 2)`);
        for (const loser of outcomes.filter((o) => !o.won)) {
          if (loser.code !== 'claim.max-concurrency') failures.push(`round ${round}: a loser got ${loser.code}`);
        }
        const store = await openStore(chooseStore({ kind: 'file' }, join(workspace, '.baton', 'store'), process.env), {
          follow: false,
        });
        const running = await store.read(
          async (r) =>
            (await r.get<{ n: number }>(`SELECT COUNT(*) AS n FROM delegations WHERE status = 'RUNNING'`))!.n,
        );
        await store.close();
        if (running !== 2) failures.push(`round ${round}: ${running} attempts RUNNING (want 2)`);
      } finally {
        rmSync(workspace, { recursive: true, force: true });
      }
    }
  } finally {
    for (const r of racers) r.stop();
  }
  return { rounds: options.rounds, failures };
}

if (require.main === module) {
  const rounds = Number(process.env.BATON_RACE_ROUNDS ?? 200);
  const racers = Number(process.env.BATON_RACERS ?? 6);
  runClaimRace({ rounds, racers }).then((result) => {
    process.stdout.write(`${result.rounds} rounds of ${racers} racers, ${result.failures.length} failures\n`);
    for (const f of result.failures) process.stdout.write(`FAIL ${f}\n`);
    process.exitCode = result.failures.length === 0 ? 0 : 1;
  });
}
