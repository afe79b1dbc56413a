import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
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

const INVALID_PLAN = ['```baton-task', 'id: T1', '```', '', '```baton-task', 'id: T1', '```', ''].join('\n');

/** Each kind of bad input, with the exit code and error code it must give. */
const BAD_INPUTS: Array<{ what: string; args: string[]; exit: number; code: string; usage?: boolean }> = [
  {
    what: 'a missing artifact file',
    args: ['ingest', '--delegation', 'D-T1-coder-001', '--artifact', 'no-such-result.md'],
    exit: 2,
    code: 'ingest.artifact-unreadable',
  },
  { what: 'an unknown gate id', args: ['approve', 'G-99', '--note', 'ok'], exit: 4, code: 'gate.unknown' },
  {
    what: 'an unknown option',
    args: ['claim', '--plan', 'plan.md', '--task', 'T2', '--bogus'],
    exit: 2,
    code: 'cli.usage',
    usage: true,
  },
  {
    what: 'an invalid plan passed to claim',
    args: ['claim', '--plan', 'invalid.plan.md', '--task', 'T1'],
    exit: 2,
    code: 'plan.invalid',
  },
];

describe('baton CLI: bad input and errors', () => {
  let ws: string;
  const run = (args: string[], cwd = ws, env?: Record<string, string>): Promise<CliResult> =>
    runCli(args, { cwd, ...(env ? { env } : {}) });

  before(async () => {
    ensureCliBuilt();
    ws = makeWorkspace();
    writeFile(ws, 'plan.md', planText([{ id: 'T1' }, { id: 'T2' }]));
    writeFile(ws, 'invalid.plan.md', INVALID_PLAN);
    const r = await run(['claim', '--plan', 'plan.md', '--task', 'T1']);
    assert.equal(r.code, 0, describeResult(r));
  });
  after(() => removeWorkspace(ws));

  describe('bad input never writes to the store', () => {
    for (const bad of BAD_INPUTS) {
      it(`${bad.what}: exit ${bad.exit}, every file under .baton/store byte-identical, one readable line on stderr and no stack trace`, async () => {
        const before = storeFingerprint(ws);
        assert.ok(Object.keys(before).length > 0, 'the store exists');
        const r = await run(bad.args);
        assert.equal(r.code, bad.exit, describeResult(r));
        assert.deepEqual(storeFingerprint(ws), before, 'the store is unchanged');
        assert.doesNotMatch(r.stderr, STACK_FRAME, describeResult(r));
        assert.equal(r.stdout, '', 'errors go to stderr');
        const first = r.stderr.split('\n')[0] ?? '';
        if (bad.usage) assert.match(first, /unknown option '--bogus'/, describeResult(r));
        else assert.match(first, /^baton: \S.*[.)]$/, describeResult(r));
      });
    }

    for (const bad of BAD_INPUTS) {
      it(`${bad.what} with --json: exactly one JSON document on stdout, {protocolVersion: 1, error: {code: ${bad.code}, message}}, store unchanged`, async () => {
        const before = storeFingerprint(ws);
        const r = await run([...bad.args, '--json']);
        assert.equal(r.code, bad.exit, describeResult(r));
        assert.deepEqual(storeFingerprint(ws), before, 'the store is unchanged');
        const doc = r.json();
        assert.equal(doc.protocolVersion, 1);
        assert.equal(doc.error.code, bad.code);
        assert.ok(typeof doc.error.message === 'string' && doc.error.message.length > 0);
        assert.doesNotMatch(r.stdout + r.stderr, STACK_FRAME);
      });
    }

    it('the invalid plan refused by claim carries its issues, with file and range, in the JSON error', async () => {
      const r = await run(['claim', '--plan', 'invalid.plan.md', '--task', 'T1', '--json']);
      assert.equal(r.code, 2, describeResult(r));
      const issue = r.json().error.issues?.find((i: { code: string }) => i.code === 'plan.duplicate-id');
      assert.ok(issue, r.stdout);
      assert.equal(issue.file, 'invalid.plan.md');
      assert.equal(issue.range.start.line, 6);
    });
  });

  it('a usage error with --json keeps stderr silent: the JSON document on stdout is the whole answer', async () => {
    // main.ts suppresses commander's stderr text under --json, but configureOutput is applied
    // to the root program after the subcommands were created, so subcommands still write it.
    const r = await run(['claim', '--task', 'T2', '--bogus', '--json']);
    assert.equal(r.code, 2, describeResult(r));
    assert.equal(r.json().error.code, 'cli.usage');
    assert.equal(r.stderr, '', describeResult(r));
  });

  it('bad input in a workspace without a store leaves no .baton/store behind', async () => {
    const fresh = makeWorkspace();
    try {
      writeFile(fresh, 'invalid.plan.md', INVALID_PLAN);
      writeFile(fresh, 'plan.md', planText([{ id: 'T1' }]));
      // An invalid plan is bad input (2); a gate or delegation the (absent) store does not hold is unknown (4).
      const results: Array<[CliResult, number]> = [
        [await run(['claim', '--plan', 'invalid.plan.md', '--task', 'T1'], fresh), 2],
        [await run(['approve', 'G-1'], fresh), 4],
        [await run(['ingest', '--delegation', 'D-T1-coder-001', '--artifact', 'missing.md'], fresh), 4],
      ];
      for (const [r, code] of results) assert.equal(r.code, code, describeResult(r));
      assert.equal(existsSync(join(fresh, '.baton', 'store')), false, 'refused commands created .baton/store');
    } finally {
      removeWorkspace(fresh);
    }
  });

  describe('workspace resolution', () => {
    it('from a subfolder, commands use the nearest folder upwards that has .baton', async () => {
      const sub = join(ws, 'deep', 'er');
      mkdirSync(sub, { recursive: true });
      const r = await run(['queue', '--json'], sub);
      assert.equal(r.code, 0, describeResult(r));
      assert.ok(
        r.json().delegations.some((d: { id: string }) => d.id === 'D-T1-coder-001'),
        r.stdout,
      );
    });

    it('--workspace (-C) wins over $BATON_WORKSPACE, which wins over the current folder', async () => {
      const elsewhere = makeWorkspace();
      try {
        const viaFlag = await run(['-C', ws, 'status', '--json'], elsewhere, { BATON_WORKSPACE: elsewhere });
        assert.equal(viaFlag.code, 0, describeResult(viaFlag));
        assert.equal(viaFlag.json().run?.planPath, 'plan.md', '-C points at the workspace with the run');
        const viaEnv = await run(['status', '--json'], elsewhere, { BATON_WORKSPACE: ws });
        assert.equal(viaEnv.json().run?.planPath, 'plan.md', '$BATON_WORKSPACE points at the workspace with the run');
        const viaCwd = await run(['status', '--json'], elsewhere);
        assert.deepEqual(viaCwd.json(), { protocolVersion: 1, workspace: elsewhere, run: null });
        assert.equal(existsSync(join(elsewhere, '.baton')), false, 'status creates nothing');
      } finally {
        removeWorkspace(elsewhere);
      }
    });

    it('claim --plan resolves the plan path against the current folder, as validate and ingest do', async () => {
      const sub = join(ws, 'plans');
      writeFile(ws, 'plans/sub.plan.md', planText([{ id: 'S1' }]));
      const validated = await run(['validate', 'sub.plan.md'], sub);
      assert.equal(validated.code, 0, describeResult(validated));
      const claimed = await run(['claim', '--plan', 'sub.plan.md', '--task', 'S1', '--json'], sub);
      assert.equal(claimed.code, 0, describeResult(claimed));
      assert.equal(claimed.json().delegationId, 'D-S1-coder-001');
    });
  });
});
