// Refusals write nothing (issue 15, item 16): a command that is refused — an unknown worker,
// a workspace without runs — leaves every file under .baton/store byte-identical, or creates
// no .baton/store at all, and says why in one line with the documented exit code.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  STACK_FRAME,
  storeFingerprint,
  writeFile,
  type CliResult,
} from '../../support/cli';
import { git } from '../../support/gitRepo';

/** What a person's repository has in info/exclude before Baton: a refused command must leave it so. */
const PERSONAL_EXCLUDE = '# my own lines\n*.scratch\n';

/** Makes the workspace a git repository whose info/exclude holds only the person's lines; returns its path. */
function personalExclude(ws: string): string {
  if (!existsSync(join(ws, '.git'))) git(ws, 'init', '--quiet');
  const exclude = join(ws, '.git', 'info', 'exclude');
  writeFileSync(exclude, PERSONAL_EXCLUDE);
  return exclude;
}

function assertRefused(r: CliResult, exit: number, message: RegExp): void {
  assert.equal(r.code, exit, describeResult(r));
  assert.doesNotMatch(r.stderr, STACK_FRAME, describeResult(r));
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr: ${describeResult(r)}`);
  assert.match(lines[0]!, message, describeResult(r));
}

describe('baton CLI: refusals write nothing', function () {
  this.timeout(120_000);
  let ws: string;
  const run = (args: string[], cwd = ws): Promise<CliResult> => runCli(args, { cwd });

  before(() => ensureCliBuilt());
  beforeEach(() => {
    ws = makeWorkspace('baton-refusals-');
    writeFile(ws, 'plan.md', planText([{ id: 'T1' }, { id: 'T2' }]));
  });
  afterEach(() => removeWorkspace(ws));

  describe('an unknown worker', () => {
    it('start --worker nope in a workspace without a store: exit 2 worker.unknown, no .baton/store', async () => {
      const r = await run(['start', 'plan.md', '--worker', 'nope']);
      assertRefused(r, 2, /^baton: There is no worker "nope"/);
      assert.equal(existsSync(join(ws, '.baton', 'store')), false, 'the refused start created .baton/store');
    });

    it('a plan whose task names an unknown worker: start refuses before creating a run', async () => {
      writeFile(ws, 'ghost.md', planText([{ id: 'T1' }]).replace('agent: coder', 'agent: coder\nworker: ghost'));
      const r = await run(['start', 'ghost.md', '--json']);
      assert.equal(r.code, 2, describeResult(r));
      assert.equal(r.json().error.code, 'worker.unknown');
      assert.equal(existsSync(join(ws, '.baton', 'store')), false);
    });

    describe('with a store and a run', () => {
      beforeEach(async () => {
        const r = await run(['claim', '--plan', 'plan.md', '--task', 'T1']);
        assert.equal(r.code, 0, describeResult(r));
      });

      for (const args of [
        ['start', 'plan.md', '--worker', 'nope'],
        ['start', 'plan.md', '--new', '--worker', 'nope'],
      ]) {
        it(`${args.join(' ')}: exit 2, every file under .baton/store byte-identical (no run, no journal line)`, async () => {
          const before = storeFingerprint(ws);
          const r = await run(args);
          assertRefused(r, 2, /^baton: There is no worker "nope"/);
          assert.deepEqual(storeFingerprint(ws), before, 'the refused start wrote to the store');
          const status = await run(['status', '--json']);
          assert.equal(status.json().run.status, 'running', 'the claimed run is the only run, as it was');
        });
      }

      it('status --run with an id that is not there: exit 4 run.unknown, one line, the store byte-identical', async () => {
        const before = storeFingerprint(ws);
        assertRefused(await run(['status', '--run', 'R-nope']), 4, /^baton: There is no run R-nope\.$/);
        assert.deepEqual(storeFingerprint(ws), before);
      });

      it("refused commands on an existing store leave the repository's info/exclude as it was (issue 26)", async () => {
        const exclude = personalExclude(ws);
        assertRefused(await run(['status', '--run', 'R-nope']), 4, /^baton: There is no run R-nope\.$/);
        writeFile(ws, 'result.md', 'no result here\n');
        const ingest = await run(['ingest', '--delegation', 'D-nope', '--artifact', 'result.md']);
        assert.equal(ingest.code, 4, describeResult(ingest));
        // Refused by a transaction that commits having changed nothing (each beat of a batch is decided on its own).
        const beat = await run(['heartbeat', '--runtime', 'W-nope', '--token', 'x']);
        assertRefused(beat, 4, /^baton: There is no worker runtime W-nope\.$/);
        assert.equal(readFileSync(exclude, 'utf8'), PERSONAL_EXCLUDE, 'a refused command edited info/exclude');
        // A command that writes adds Baton's lines (the store existed before the repository).
        const claimed = await run(['claim', '--plan', 'plan.md', '--task', 'T2']);
        assert.equal(claimed.code, 0, describeResult(claimed));
        assert.match(readFileSync(exclude, 'utf8'), /^# my own lines\n\*\.scratch\n# Baton's store/);
      });

      it("resume --worker nope after a stop: exit 2 and the user's stop stays (store byte-identical)", async () => {
        const stopped = await run(['stop']);
        assert.equal(stopped.code, 0, describeResult(stopped));
        const before = storeFingerprint(ws);
        const r = await run(['resume', '--worker', 'nope']);
        assertRefused(r, 2, /^baton: There is no worker "nope"/);
        assert.deepEqual(storeFingerprint(ws), before, 'the refused resume lifted the stop');
      });
    });
  });

  describe('an invalid config: every command that reads the store refuses it (issue 26)', () => {
    // With an invalid config the workspace's store is unknown (the config names it: a team's PostgreSQL store shows no
    // .baton/store here), so "no runs yet" would be a guess; the config's issues are the answer, whatever the store.
    const COMMANDS = [
      ['status'],
      ['queue'],
      ['gates'],
      ['events'],
      ['diagnose'],
      ['stop'],
      ['claim', '--plan', 'plan.md', '--task', 'T1'],
      ['heartbeat', '--runtime', 'RT-1', '--token', 'x'],
      ['start', 'plan.md'],
    ];
    it('leaseSeconds: 1 — exit 2 config.invalid with the issue, nothing created, info/exclude as it was; doctor fails it', async () => {
      writeFile(ws, '.baton/config.json', JSON.stringify({ leaseSeconds: 1 }));
      const exclude = personalExclude(ws);
      // The same lines `baton validate` and every other config refusal print (once here: the text is one function's).
      const human = await run(['status']);
      assert.equal(human.code, 2, describeResult(human));
      assert.doesNotMatch(human.stderr, STACK_FRAME, describeResult(human));
      assert.match(
        human.stderr,
        /^baton: .*config\.json is invalid\.\n.*config\.json:1:\d+: error config\.invalid-field: leaseSeconds:/,
      );
      for (const args of COMMANDS) {
        const json = await run([...args, '--json']);
        assert.equal(json.code, 2, describeResult(json));
        const error = json.json<{ error: { code: string; issues: Array<{ field: string }> } }>().error;
        assert.equal(error.code, 'config.invalid', describeResult(json));
        assert.deepEqual(
          error.issues.map((i) => i.field),
          ['leaseSeconds'],
        );
        assert.equal(existsSync(join(ws, '.baton', 'store')), false, `${args.join(' ')} created .baton/store`);
        assert.equal(readFileSync(exclude, 'utf8'), PERSONAL_EXCLUDE, `${args.join(' ')} edited info/exclude`);
      }
      const doctor = await run(['doctor', '--json']);
      assert.equal(doctor.code, 7, describeResult(doctor));
      const checks = doctor.json<{ checks: Array<{ name: string; status: string; detail: string }> }>().checks;
      assert.equal(checks.find((c) => c.name === 'config')?.status, 'fail');
      const store = checks.find((c) => c.name === 'store');
      assert.equal(store?.status, 'fail', 'doctor said "no store yet" for a config that names no store it can trust');
      assert.match(store.detail, /^not checked: .*config\.json is invalid/);
      assert.deepEqual(readdirSync(join(ws, '.baton')), ['config.json']);
      assert.equal(readFileSync(exclude, 'utf8'), PERSONAL_EXCLUDE);
    });
  });

  describe('a workspace without runs: commands about runs create nothing', () => {
    const COMMANDS: Array<{ args: string[]; code: string }> = [
      { args: ['resume'], code: 'run.unknown' },
      { args: ['stop'], code: 'run.unknown' },
      { args: ['reconcile'], code: 'run.unknown' },
      { args: ['cleanup'], code: 'run.unknown' },
      { args: ['diagnose'], code: 'run.unknown' },
      { args: ['heartbeat', '--runtime', 'RT-1', '--token', 'x'], code: 'runtime.unknown' },
      { args: ['claim', '--run', 'R-1', '--task', 'T1'], code: 'run.unknown' },
      { args: ['claim', '--task', 'T1'], code: 'run.unknown' },
      // A plan without the task: refused before the store is created for its run.
      { args: ['claim', '--plan', 'plan.md', '--task', 'T9'], code: 'task.unknown' },
      { args: ['events', '--follow'], code: 'run.unknown' },
      // Without --run these say "No Baton runs yet" (exit 0); an explicit id that does not exist is an error.
      { args: ['status', '--run', 'R-1'], code: 'run.unknown' },
      { args: ['queue', '--run', 'R-1'], code: 'run.unknown' },
    ];
    for (const c of COMMANDS) {
      // An unknown run, runtime or task (no run state at all here): 4, as the task-executor seed says (docs/cli.md).
      it(`${c.args.join(' ')}: exit 4 ${c.code}, one line, no .baton/store`, async () => {
        const r = await run(c.args);
        assertRefused(
          r,
          4,
          /^baton: (There (are no Baton runs|is no runtime|is no run R-1: there are no Baton runs)|Task T9 is not in plan\.md\.$)/,
        );
        assert.equal(existsSync(join(ws, '.baton')), false, `${c.args[0]} created .baton`);
        const json = await run([...c.args, '--json']);
        assert.equal(json.code, 4, describeResult(json));
        assert.equal(json.json().error.code, c.code);
        assert.equal(existsSync(join(ws, '.baton')), false);
      });
    }
  });
});
