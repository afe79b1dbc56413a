import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  writeFile,
} from '../../support/cli';

/** `baton init` and `baton validate`, run as the built CLI in a temp workspace. */
describe('baton CLI: init and validate', () => {
  let ws: string;

  before(() => {
    ensureCliBuilt();
    ws = makeWorkspace();
  });
  after(() => removeWorkspace(ws));

  describe('init', () => {
    it('creates .baton/config.json (a valid config) and .baton/.gitignore (ignores everything but config.json)', async () => {
      const r = await runCli(['init', '--json'], { cwd: ws });
      assert.equal(r.code, 0, describeResult(r));
      const doc = r.json();
      assert.equal(doc.protocolVersion, 1);
      assert.equal(doc.workspace, ws);
      const configPath = join(ws, '.baton', 'config.json');
      const gitignorePath = join(ws, '.baton', '.gitignore');
      assert.deepEqual([...doc.created].sort(), [configPath, gitignorePath].sort());
      const config = JSON.parse(readFileSync(configPath, 'utf8'));
      assert.equal(config.leaseSeconds, 120);
      assert.ok(
        Array.isArray(config.riskTags) && config.riskTags.includes('database'),
        'the default risk tags include database',
      );
      const gitignore = readFileSync(gitignorePath, 'utf8').split('\n');
      assert.ok(
        gitignore.includes('*') && gitignore.includes('!config.json') && gitignore.includes('!.gitignore'),
        gitignore.join('\n'),
      );
    });

    it('changes nothing when run a second time (same bytes, same mtimes, nothing created)', async () => {
      const files = ['config.json', '.gitignore'].map((f) => join(ws, '.baton', f));
      writeFile(ws, '.baton/config.json', '{\n  // edited by hand\n  "leaseSeconds": 60\n}\n');
      const before = files.map((f) => ({ bytes: readFileSync(f, 'utf8'), mtime: statSync(f).mtimeMs }));
      const human = await runCli(['init'], { cwd: ws });
      assert.equal(human.code, 0, describeResult(human));
      assert.match(human.stdout, /already set up/);
      const json = await runCli(['init', '--json'], { cwd: ws });
      assert.equal(json.code, 0, describeResult(json));
      assert.deepEqual(json.json().created, []);
      const after = files.map((f) => ({ bytes: readFileSync(f, 'utf8'), mtime: statSync(f).mtimeMs }));
      assert.deepEqual(after, before);
    });
  });

  describe('validate', () => {
    const invalidPlan = [
      '# Broken plan',
      '',
      '```baton-task',
      'id: T1',
      'title: First',
      '```',
      '',
      '```baton-task',
      'id: T1',
      'title: Same id again',
      '```',
      '',
      '```baton-task',
      'id: T3',
      'title: Depends on a task that does not exist',
      'depends: [T9]',
      '```',
      '',
    ].join('\n');

    it('exits 0 for a valid plan and says how many tasks it has', async () => {
      writeFile(ws, 'good.plan.md', planText([{ id: 'T1' }, { id: 'T2', depends: ['T1'] }]));
      const r = await runCli(['validate', 'good.plan.md'], { cwd: ws });
      assert.equal(r.code, 0, describeResult(r));
      assert.match(r.stdout, /good\.plan\.md: valid plan with 2 tasks/);
      assert.equal(r.stderr, '');
    });

    it('exits 2 for an invalid plan and prints one `file:line:col: error code: message` line per issue', async () => {
      writeFile(ws, 'bad.plan.md', invalidPlan);
      const r = await runCli(['validate', 'bad.plan.md'], { cwd: ws });
      assert.equal(r.code, 2, describeResult(r));
      const issueLines = r.stdout.split('\n').filter((l) => l.startsWith('bad.plan.md:'));
      assert.ok(issueLines.length >= 2, `expected the duplicate id and the unknown dependency:\n${r.stdout}`);
      for (const line of issueLines)
        assert.match(line, /^bad\.plan\.md:\d+:\d+: (error|warning) [a-z]+(\.[a-z-]+)+: \S/, line);
      assert.ok(
        issueLines.some((l) => /^bad\.plan\.md:9:\d+: error plan\.duplicate-id: /.test(l)),
        `the duplicate id is reported at line 9, where the second "id: T1" is:\n${r.stdout}`,
      );
    });

    it('with --json prints one document: protocolVersion 1, valid false, issues with ranges', async () => {
      const r = await runCli(['validate', 'bad.plan.md', '--json'], { cwd: ws });
      assert.equal(r.code, 2, describeResult(r));
      const doc = r.json();
      assert.equal(doc.protocolVersion, 1);
      assert.equal(doc.valid, false);
      assert.equal(doc.kind, 'plan');
      assert.ok(doc.issues.length >= 2, JSON.stringify(doc.issues));
      for (const i of doc.issues) {
        assert.equal(typeof i.code, 'string');
        assert.equal(typeof i.message, 'string');
        assert.ok(
          i.range && i.range.start.line >= 1 && i.range.start.column >= 1,
          `issue ${i.code} has a range: ${JSON.stringify(i)}`,
        );
      }
      const duplicate = doc.issues.find((i: { code: string }) => i.code === 'plan.duplicate-id');
      assert.equal(duplicate?.range.start.line, 9);
    });

    it('exits 2 for .baton/config.json with leaseSeconds: 1, with an issue ranged at the bad value', async () => {
      writeFile(ws, '.baton/config.json', '{\n  "leaseSeconds": 1\n}\n');
      const r = await runCli(['validate', '.baton/config.json', '--json'], { cwd: ws });
      assert.equal(r.code, 2, describeResult(r));
      const doc = r.json();
      assert.equal(doc.protocolVersion, 1);
      assert.equal(doc.valid, false);
      assert.equal(doc.kind, 'config');
      const bad = doc.issues.find((i: { field: string }) => i.field === 'leaseSeconds');
      assert.ok(bad, JSON.stringify(doc.issues));
      assert.equal(bad.severity, 'error');
      assert.deepEqual(bad.range.start, { line: 2, column: 19 }, 'the range points at the 1 after "leaseSeconds": ');
      const human = await runCli(['validate', '.baton/config.json'], { cwd: ws });
      assert.equal(human.code, 2, describeResult(human));
      assert.match(human.stdout, /^\.baton\/config\.json:2:19: error config\.invalid-field: leaseSeconds/m);
    });
  });
});
