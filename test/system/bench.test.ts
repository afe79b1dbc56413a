import assert from 'node:assert/strict';
import { PG_SECTION, pgSection, runPgBench, SMOKE_PG } from '../bench/pgBench';
import {
  integrationFigures,
  integrationSection,
  INTEGRATION_SECTION,
  runIntegrationBench,
} from '../bench/integrationBench';
import { runBench, SMOKE_INTEGRATION } from '../bench/run';
import { ensureCliBuilt } from '../support/cli';

describe('benchmark harness (tiny sizes, so it cannot rot; the figures come from npm run bench)', () => {
  it('runs every row once and renders the table', async function () {
    this.timeout(300_000); // a hang detector: the smoke run starts Chromium and child processes
    ensureCliBuilt(); // the engine rows measure dist/, the dashboard rows load dist/webview
    const outcome = await runBench({
      sizes: [50, 100],
      reps: 1,
      cycles: 5,
      warmupCycles: 1,
      sqlJsCycles: 2,
      out: false,
    });
    assert.match(outcome.markdown, /Baton store/);
    assert.match(outcome.markdown, /Raw append \+ fdatasync/);
    // Row 3's better-sqlite3 is not a dependency (npm run bench installs it into .cache/): measured at every size
    // when it is there, and otherwise the row says why not.
    const sqliteRows = outcome.markdown.match(/^\| 3\. better-sqlite3, WAL, synchronous=FULL .*$/gm) ?? [];
    assert.equal(sqliteRows.length, 2, outcome.markdown);
    if (outcome.result.sqliteMissing === undefined)
      assert.ok(
        outcome.result.sizes.every((s) => s.sqlite && s.sqlite.median > 0),
        JSON.stringify(outcome.result.sizes.map((s) => s.sqlite)),
      );
    else
      assert.ok(
        sqliteRows.every((row) => row.includes(`not measured: better-sqlite3 ${outcome.result.sqliteMissing}`)),
        sqliteRows.join('\n'),
      );
    assert.match(outcome.markdown, /1b\. Baton store, 8 callers at once/);
    assert.ok(
      outcome.result.sizes.every(
        (s) =>
          s.batonConcurrent && s.batonConcurrent.commitsPerSecond.median > 0 && s.batonConcurrent.commitsPerFlush >= 1,
      ),
    );
    assert.ok(outcome.checks.length > 0);
    // The dashboard rows, in Chromium, at smoke size.
    assert.match(outcome.markdown, /## Dashboard webview \(Chromium\)/);
    assert.ok(outcome.dashboard && outcome.dashboard.firstRender.median > 0 && outcome.dashboard.tick.median > 0);
    // The engine rows at smoke size: the last beat of every runtime heard across processes (beats between two of the
    // observer's catch-ups are announced once, with the later count: a loaded machine hears fewer), the store opened,
    // the bundle measured.
    assert.match(outcome.markdown, /## Engine rows/);
    assert.ok(
      outcome.engine &&
        outcome.engine.heartbeat.heard > 0 &&
        outcome.engine.heartbeat.runtimes > 0 &&
        outcome.engine.heartbeat.latestHeard === outcome.engine.heartbeat.runtimes,
      JSON.stringify(outcome.engine?.heartbeat),
    );
    assert.ok(outcome.engine.open.openMs.median > 0 && outcome.engine.bundleBytes > 0);
    // The MCP rows: an agent's baton_progress calls went through its own `baton mcp`, and the coordinator heard notes.
    assert.match(outcome.markdown, /`baton_progress` calls\/s per agent/);
    const mcp = outcome.agentStream?.mcp[0];
    assert.ok(mcp && mcp.callsPerSecond.median > 0 && mcp.announcedPerSecond.median > 0, JSON.stringify(mcp));
    // The CLI's CPU on a store, as built and on V8's default tiering: both commands ran and printed their CPU.
    assert.match(outcome.markdown, /\| CLI on a store: `baton status` on a workspace with a run/);
    assert.ok(outcome.engine.cliStore.builtMs.median > 0 && outcome.engine.cliStore.defaultTieringMs.median > 0);
  });
});

describe('merge-queue bench row (tiny sizes; the figures come from npm run bench)', () => {
  it('integrates the same passed tasks one at a time, batched, and by a plain sequential merge, and renders the section', async function () {
    this.timeout(300_000); // a hang detector: a few minutes of git and node at load 10
    const { integrationTasks: tasks, integrationBatches: batches } = SMOKE_INTEGRATION;
    const result = await runIntegrationBench({ tasks, batches, reps: SMOKE_INTEGRATION.integrationReps });
    const section = integrationSection(result);
    assert.ok(
      section.startsWith(INTEGRATION_SECTION.heading) && section.trimEnd().endsWith(INTEGRATION_SECTION.end),
      section,
    );
    assert.match(section, /\| \*\*Baton, `integrationBatch: 1`\*\* \|/);
    assert.match(section, new RegExp(`\\| \\*\\*Baton, \`integrationBatch: ${batches[1]}\`\\*\\* \\|`));
    assert.match(section, /\| plain sequential merge \(reference\)/);
    assert.deepEqual(
      result.baton.map((b) => [b.batch, b.reps.length]),
      batches.map((b) => [b, SMOKE_INTEGRATION.integrationReps]),
    );
    const [one, batched] = result.baton.map((b) => b.reps[0]!);
    const plain = result.plain[0]!;
    // Every task reached main on each side, the same way: its work and one merge commit each.
    for (const side of [one!, batched!, plain])
      assert.deepEqual([side.commits, side.merges], [2 * tasks, tasks], JSON.stringify(side));
    // Verify runs: as the events say and as the command itself counted. One at a time: one per task, no batch;
    // batched: fewer trees verified than tasks; the plain merge: once per branch.
    assert.deepEqual([one!.verifyRuns, one!.verifyRunsCounted, one!.batches], [tasks, tasks, 0], JSON.stringify(one));
    assert.equal(batched!.verifyRuns, batched!.verifyRunsCounted, JSON.stringify(batched));
    assert.ok(batched!.batches >= 1 && batched!.verifyRuns < tasks, JSON.stringify(batched));
    assert.equal(plain.verifyRuns, tasks);
    // Times measured, the integration phase inside the run (no bounds: timing belongs in the bench).
    for (const rep of [one!, batched!]) assert.ok(rep.integrationMs > 0 && rep.runMs >= rep.integrationMs);
    const figures = integrationFigures(result);
    assert.ok(figures.plainMs.median > 0 && figures.rows.every((row) => Number.isFinite(row.perRoundVsPlain[0])));
  });
});

describe('PostgreSQL bench rows (tiny sizes; the figures come from npm run bench)', () => {
  it('runs each row once on a cluster of its own and renders the section', async function () {
    this.timeout(180_000);
    const result = await runPgBench(SMOKE_PG);
    const section = pgSection(result);
    assert.ok(section.startsWith(PG_SECTION.heading) && section.trimEnd().endsWith(PG_SECTION.end), section);
    // Every configuration of the cycles row measured, for each kind: Baton on PostgreSQL (one run, and a run per
    // process), the bare loop, the bare loop with Baton's bookkeeping, files.
    assert.equal(result.throughput.length, SMOKE_PG.processes.length * 5);
    assert.ok(result.throughput.some((c) => c.kind === 'pgRuns'));
    assert.ok(result.throughput.every((c) => c.rate.median > 0 && c.rates.length === SMOKE_PG.reps));
    const baton = result.throughput.find((c) => c.kind === 'pg')!;
    const bare = result.throughput.find((c) => c.kind === 'bare')!;
    // The bare loop is three autocommitted statements per cycle; Baton's cycle goes through the engine.
    assert.equal(bare.roundTrips, 3);
    // So is the one with the bookkeeping: each statement also appends its events (and keeps the result's content).
    const booked = result.throughput.find((c) => c.kind === 'booked')!;
    assert.equal(booked.roundTrips, 3);
    assert.equal(booked.transactions, 3);
    assert.ok(baton.roundTrips > bare.roundTrips && baton.serverCpuMs >= 0, JSON.stringify(baton));
    // Heartbeats heard in another process, on both stores: every beat committed, the last beat of each runtime heard
    // (beats between two of the observer's catch-ups are announced once, with the later count).
    assert.deepEqual(
      result.latency.map((l) => [l.backend, l.beats, l.latestHeard === l.runtimes && l.runtimes > 0]),
      [
        ['pg', SMOKE_PG.latencyBeats, true],
        ['file', SMOKE_PG.latencyBeats, true],
      ],
      JSON.stringify(result.latency.map((l) => ({ ...l, commitMs: undefined, aboveCommitMs: undefined }))),
    );
    // Every resident beat committed, with the connections it took counted.
    const resident = result.resident!;
    assert.equal(resident.committed, resident.scheduled);
    assert.equal(resident.failed, 0);
    assert.ok(resident.connections.baton >= SMOKE_PG.residentProcesses, JSON.stringify(resident.connections));
  });
});
