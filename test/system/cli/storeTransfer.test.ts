// Moving a workspace from the file store to PostgreSQL and back (docs/store-transfer.md), with
// the `baton` CLI as a user runs it: a real run (a coordinator, worker processes, a gate, an
// ingested result) on files; `baton store export`; `baton store import` into a fresh PostgreSQL
// schema; the same history in `status`, `gates` and `events` there; the run goes on there
// (approve, resume: new attempts, a new coordinator epoch, new events after the imported ones);
// then PostgreSQL → a new file store through a pipe. And what is refused, with nothing written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import {
  CLI,
  cleanEnv,
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  ROOT,
  runCli,
  STACK_FRAME,
  writeFile,
  type CliResult,
} from '../../support/cli';

interface StatusView {
  run: { id: string; status: string };
  tasks: Array<{ id: string; status: string }>;
  delegations: Array<{ id: string; status: string }>;
}
interface EventView {
  id: number;
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

const WORKER = {
  type: 'process',
  command: process.execPath,
  args: [join(ROOT, 'test/fixtures/workers/attemptWorker.js'), '{taskId}'],
};
const PLAN = planText([{ id: 'T1' }, { id: 'T2', depends: ['T1'], risk: ['database'] }, { id: 'T3', depends: ['T2'] }]);

describe('baton store export / import: a workspace moves from files to PostgreSQL and back', function () {
  // A run, three stores and some twenty CLI processes: minutes on a loaded machine.
  this.timeout(480_000);
  let cluster: PostgresCluster;
  const workspaces: string[] = [];

  /** A workspace with the plan and the fake worker, on the file store or on a PostgreSQL schema of its own. */
  const workspace = (store: { kind: 'file' } | { kind: 'postgres'; schema: string }): string => {
    const dir = makeWorkspace('baton-transfer-');
    workspaces.push(dir);
    writeFile(
      dir,
      '.baton/config.json',
      JSON.stringify({ store, isolation: 'none', defaultWorker: 'fake', workers: { fake: WORKER } }),
    );
    writeFile(dir, 'plan.md', PLAN);
    return dir;
  };
  const env = (): Record<string, string> => ({ BATON_STORE_URL: cluster.url, NO_COLOR: '1' });
  const cli = async (dir: string, args: string[], expected = 0): Promise<CliResult> => {
    const r = await runCli(args, { cwd: dir, env: env(), timeoutMs: 60_000 });
    assert.equal(r.code, expected, `baton ${args.join(' ')}\n${describeResult(r)}`);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(cluster.password), `the password was printed:\n${describeResult(r)}`);
    return r;
  };
  /**
   * What `status --json` shows of the history. Left out: the moment it was asked (`now`) and the
   * config file's digest — the two workspaces' configs differ by design (one names the PostgreSQL store).
   */
  const status = async (dir: string): Promise<StatusView> => {
    const view = (await cli(dir, ['status', '--json'])).json<
      StatusView & { now?: number; config?: { file?: unknown } }
    >();
    delete view.now;
    delete view.config?.file;
    return view;
  };
  /** What a user sees of the history: status, every gate, the queue, every event. */
  const history = async (dir: string) => ({
    status: await status(dir),
    gates: (await cli(dir, ['gates', '--all', '--json'])).json<{ gates: unknown[] }>().gates,
    events: (await cli(dir, ['events', '--json'])).json<{ events: EventView[] }>().events,
    queue: { ...(await cli(dir, ['queue', '--json'])).json<Record<string, unknown>>(), now: 'left out' },
  });

  before(async function () {
    this.timeout(600_000);
    ensureCliBuilt();
    cluster = await sharedPostgresCluster();
  });
  after(() => {
    for (const dir of workspaces.splice(0)) removeWorkspace(dir);
  });

  it('files → PostgreSQL: the same history, and the run goes on there; PostgreSQL → files through a pipe', async () => {
    // A real run on the file store: T1 runs and passes (its result ingested), T2 waits at its risk gate.
    const files = workspace({ kind: 'file' });
    const started = await cli(files, ['start', 'plan.md'], 8);
    assert.match(started.stdout + started.stderr, /G-1/);
    const before = await history(files);
    assert.deepEqual(
      before.status.tasks.map((t) => `${t.id}:${t.status}`),
      ['T1:completed', 'T2:gated', 'T3:pending'],
    );

    const document = join(files, 'store.jsonl');
    const exported = await cli(files, ['store', 'export', '--out', document, '--json']);
    const summary = exported.json<{ exported: { tables: Record<string, number> } }>().exported;
    for (const table of [
      'runs',
      'tasks',
      'delegations',
      'runtimes',
      'gates',
      'ingestions',
      'events',
      'coordinator_leases',
    ])
      assert.ok(summary.tables[table]! >= 1, `${table}: ${JSON.stringify(summary.tables)}`);

    // Into a fresh PostgreSQL schema: what status, gates, queue and events show is the same history.
    const team = workspace({ kind: 'postgres', schema: schemaFor(`transfer-${process.pid}-to-pg`) });
    const imported = await cli(team, ['store', 'import', '--in', document]);
    assert.match(imported.stdout, /^Imported 1 run, \d+ events and every other row/);
    const moved = await history(team);
    assert.deepEqual(moved, before);

    // The run goes on on PostgreSQL: approve, resume. New attempts, a new coordinator epoch, new events
    // with ids after the imported ones (PostgreSQL's identity continues), nothing imported overwritten.
    await cli(team, ['approve', 'G-1', '--note', 'moved to the team store']);
    const resumed = await cli(team, ['resume']);
    const after = await history(team);
    assert.equal(after.status.run.status, 'completed', resumed.stdout);
    assert.deepEqual(
      after.status.tasks.map((t) => `${t.id}:${t.status}`),
      ['T1:completed', 'T2:completed', 'T3:completed'],
    );
    const importedIds = before.events.map((e) => e.id);
    const newEvents = after.events.filter((e) => !importedIds.includes(e.id));
    assert.ok(newEvents.length > 5, `new events: ${newEvents.map((e) => e.type).join(', ')}`);
    assert.ok(Math.min(...newEvents.map((e) => e.id)) > Math.max(...importedIds));
    assert.deepEqual(
      after.events.filter((e) => importedIds.includes(e.id)),
      before.events,
      'the imported events are all still there, unchanged',
    );
    const epochs = (events: EventView[]): number[] =>
      events.filter((e) => e.type === 'coordinator:acquired').map((e) => Number(e.data.epoch));
    assert.ok(epochs(before.events).length >= 1, before.events.map((e) => e.type).join(', '));
    assert.ok(
      Math.min(...epochs(newEvents)) > Math.max(...epochs(before.events)),
      `the new coordinator's epoch comes after the imported ones: ${JSON.stringify([epochs(before.events), epochs(newEvents)])}`,
    );

    // PostgreSQL → a new file store, through a pipe: baton store export | baton store import.
    const back = workspace({ kind: 'file' });
    const piped = await pipe(team, back, env());
    assert.equal(piped.exportCode, 0, piped.output);
    assert.equal(piped.importCode, 0, piped.output);
    assert.ok(!piped.output.includes(cluster.password));
    assert.deepEqual(await history(back), after);

    // The document holds no password (the URL came from the environment, never into the store).
    assert.ok(!readFileSync(document, 'utf8').includes(cluster.password));
  });

  it('refuses a store that is not empty (exit 3), a cut document (exit 2, its line) and a newer schema (exit 7): one line each, nothing written', async () => {
    const files = workspace({ kind: 'file' });
    await cli(files, ['claim', '--plan', 'plan.md', '--task', 'T1']);
    const document = join(files, 'store.jsonl');
    await cli(files, ['store', 'export', '--out', document]);
    const lines = readFileSync(document, 'utf8').trimEnd().split('\n');

    const team = workspace({ kind: 'postgres', schema: schemaFor(`transfer-${process.pid}-refusals`) });
    const oneLine = (r: CliResult, message: RegExp): void => {
      assert.equal(r.stdout, '');
      assert.match(r.stderr.split('\n')[0]!, message);
      assert.doesNotMatch(r.stderr, STACK_FRAME);
    };

    const cut = join(files, 'cut.jsonl');
    writeFileSync(cut, `${lines.slice(0, 4).join('\n')}\n${lines[4]!.slice(0, 10)}`);
    const cutRefused = await cli(team, ['store', 'import', '--in', cut], 2);
    oneLine(
      cutRefused,
      /^baton: The store document .*cut\.jsonl is not valid at line 5: not JSON .*; nothing was written\.$/,
    );

    const newer = join(files, 'newer.jsonl');
    const header = JSON.parse(lines[0]!) as { schemaVersion: number };
    writeFileSync(
      newer,
      [JSON.stringify({ ...header, schemaVersion: header.schemaVersion + 1 }), ...lines.slice(1)].join('\n'),
    );
    const newerRefused = await cli(team, ['store', 'import', '--in', newer, '--json'], 7);
    assert.equal(newerRefused.json<{ error: { code: string } }>().error.code, 'store.schema-too-new');

    // A row the database refuses, after others went in (a task twice; the counts adjusted so the check passes):
    // the one transaction is rolled back.
    const twice = join(files, 'twice.jsonl');
    const taskLine = lines.findIndex((l) => l.startsWith('{"table":"tasks"'));
    const counts = JSON.parse(lines[0]!) as { tables: Record<string, { rows: number }> };
    counts.tables.tasks!.rows += 1;
    const end = JSON.parse(lines.at(-1)!) as { rows: number };
    writeFileSync(
      twice,
      [
        JSON.stringify(counts),
        ...lines.slice(1, taskLine + 1),
        lines[taskLine]!,
        ...lines.slice(taskLine + 1, -1),
        JSON.stringify({ ...end, rows: end.rows + 1 }),
      ].join('\n'),
    );
    const twiceRefused = await cli(team, ['store', 'import', '--in', twice], 2);
    oneLine(
      twiceRefused,
      /is not valid at line \d+: the rows of tasks at lines \d+–\d+ could not be written \(duplicate key/,
    );

    // Nothing was written: the PostgreSQL store is still empty, so the real document goes in.
    await cli(team, ['store', 'import', '--in', document]);
    const again = await cli(team, ['store', 'import', '--in', document], 3);
    oneLine(
      again,
      /^baton: The PostgreSQL store of this workspace \(schema t_[0-9a-f]+\) already holds 1 run: a store is imported only into an empty one\./,
    );
    assert.deepEqual(await status(team), await status(files));

    // A workspace with no store has nothing to export (no run state: 4), and none is created for asking.
    const empty = workspace({ kind: 'file' });
    const nothing = await cli(empty, ['store', 'export'], 4);
    oneLine(nothing, /^baton: There is no Baton store in .* to export/);
  });
});

/** `baton store export` in `from` piped into `baton store import` in `to`, as a shell pipe would. */
function pipe(
  from: string,
  to: string,
  env: Record<string, string>,
): Promise<{ exportCode: number | null; importCode: number | null; output: string }> {
  return new Promise((resolvePipe, reject) => {
    const exporter = spawn(process.execPath, [CLI, 'store', 'export'], {
      cwd: from,
      env: cleanEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const importer = spawn(process.execPath, [CLI, 'store', 'import'], {
      cwd: to,
      env: cleanEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    exporter.stdout!.pipe(importer.stdin!);
    let output = '';
    for (const stream of [exporter.stderr, importer.stdout, importer.stderr])
      stream!.setEncoding('utf8').on('data', (c: string) => (output += c));
    let exportCode: number | null | undefined;
    exporter.on('error', reject);
    importer.on('error', reject);
    exporter.on('close', (code) => (exportCode = code));
    importer.on('close', (code) => {
      const finish = (): void => resolvePipe({ exportCode: exportCode ?? null, importCode: code, output });
      if (exportCode !== undefined) finish();
      else exporter.once('close', finish);
    });
  });
}
