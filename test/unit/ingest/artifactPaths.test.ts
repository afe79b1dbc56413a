import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Range } from '../../../src/engine/domain/issue';
import { MAX_ARTIFACT_PATH_LENGTH } from '../../../src/engine/domain/result/artifactPathRules';
import { checkArtifactPaths } from '../../../src/engine/usecases/artifactPaths';
import { parseResultArtifact } from '../../../src/engine/domain/result/parseResult';
import type { ParsedResult } from '../../../src/engine/domain/result/parseResult';

function rangeFor(index: number): Range {
  return { start: { line: index + 10, column: 5 }, end: { line: index + 10, column: 9 } };
}

function resultWith(artifacts: string[]): Pick<ParsedResult, 'artifacts' | 'artifactRanges'> {
  return { artifacts, artifactRanges: artifacts.map((_, i) => rangeFor(i)) };
}

describe('checkArtifactPaths', () => {
  let root: string;
  let workspace: string;
  let outside: string;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-artifacts-'));
    workspace = path.join(root, 'ws');
    outside = path.join(root, 'outside');
    fs.mkdirSync(path.join(workspace, 'src', 'notes'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(workspace, 'src', 'notes', 'store.ts'), 'export {};\n');
    fs.writeFileSync(path.join(workspace, 'README.md'), '# ws\n');
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
  });

  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('accepts existing files and folders inside the workspace', () => {
    assert.deepEqual(checkArtifactPaths(workspace, resultWith(['src/notes/store.ts', 'README.md', 'src'])), []);
  });

  it('accepts a symlink whose target stays inside the workspace, and a workspace root reached through a symlink', () => {
    fs.symlinkSync(path.join(workspace, 'src', 'notes', 'store.ts'), path.join(workspace, 'store-link.ts'));
    const linkedRoot = path.join(root, 'ws-link');
    fs.symlinkSync(workspace, linkedRoot, 'dir');
    assert.deepEqual(checkArtifactPaths(linkedRoot, resultWith(['store-link.ts', 'src/notes/store.ts'])), []);
  });

  it('result.artifact-outside-workspace: a symlinked file or folder that leads outside, ranged on its entry', () => {
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'innocent.txt'));
    fs.symlinkSync(outside, path.join(workspace, 'src', 'vendor'), 'dir');
    const issues = checkArtifactPaths(workspace, resultWith(['README.md', 'innocent.txt', 'src/vendor/secret.txt']));
    assert.deepEqual(
      issues.map((i) => [i.code, i.range, i.field]),
      [
        ['result.artifact-outside-workspace', rangeFor(1), 'artifacts'],
        ['result.artifact-outside-workspace', rangeFor(2), 'artifacts'],
      ],
    );
    assert.match(issues[0]?.message ?? '', /symbolic link/);
  });

  it('result.artifact-outside-workspace: a path that climbs out with ".."', () => {
    const issues = checkArtifactPaths(workspace, resultWith(['../outside/secret.txt', 'src/../../outside/secret.txt']));
    assert.deepEqual(
      issues.map((i) => [i.code, i.range]),
      [
        ['result.artifact-outside-workspace', rangeFor(0)],
        ['result.artifact-outside-workspace', rangeFor(1)],
      ],
    );
  });

  it('result.artifact-absolute: POSIX, Windows UNC and rooted paths', () => {
    const absolute = path.join(workspace, 'README.md');
    const issues = checkArtifactPaths(workspace, resultWith([absolute, '\\\\server\\share\\x', '/etc/passwd']));
    assert.deepEqual(
      issues.map((i) => [i.code, i.range]),
      [0, 1, 2].map((i) => ['result.artifact-absolute', rangeFor(i)]),
    );
  });

  it('result.artifact-not-normalized: ".", "..", empty segments, trailing slash and backslashes', () => {
    const paths = [
      './README.md',
      'src/./notes/store.ts',
      'src/notes/../notes/store.ts',
      'src//notes/store.ts',
      'src/',
      'src\\notes\\store.ts',
    ];
    const issues = checkArtifactPaths(workspace, resultWith(paths));
    assert.deepEqual(
      issues.map((i) => [i.code, i.range]),
      paths.map((_, i) => ['result.artifact-not-normalized', rangeFor(i)]),
    );
    assert.match(issues[0]?.recommendation ?? '', /README\.md/);
    assert.match(issues[5]?.recommendation ?? '', /src\/notes\/store\.ts/);
  });

  it('result.artifact-invalid-path: NUL, too long, drive letter, empty', () => {
    const paths = [
      'README.md\0.txt',
      'a/'.repeat(MAX_ARTIFACT_PATH_LENGTH / 2) + 'b',
      'C:\\Users\\x',
      'c:relative',
      '',
    ];
    const issues = checkArtifactPaths(workspace, resultWith(paths));
    assert.deepEqual(
      issues.map((i) => [i.code, i.range]),
      paths.map((_, i) => ['result.artifact-invalid-path', rangeFor(i)]),
    );
    assert.match(issues[1]?.message ?? '', /1025 characters.*1024/);
  });

  it('accepts a path of exactly the maximum length when it exists', () => {
    const name = 'n'.repeat(200);
    const segments = [name, name, name, name];
    const last = 'f'.repeat(MAX_ARTIFACT_PATH_LENGTH - segments.join('/').length - 1);
    fs.mkdirSync(path.join(workspace, ...segments), { recursive: true });
    fs.writeFileSync(path.join(workspace, ...segments, last), '');
    const p = [...segments, last].join('/');
    assert.equal(p.length, MAX_ARTIFACT_PATH_LENGTH);
    assert.deepEqual(checkArtifactPaths(workspace, resultWith([p])), []);
  });

  it('result.artifact-missing: a file that does not exist and a dangling symlink', () => {
    fs.symlinkSync(path.join(workspace, 'gone.txt'), path.join(workspace, 'dangling.txt'));
    const issues = checkArtifactPaths(
      workspace,
      resultWith(['README.md', 'src/notes/missing.ts', 'dangling.txt', 'README.md/inner']),
    );
    assert.deepEqual(
      issues.map((i) => [i.code, i.range]),
      [
        ['result.artifact-missing', rangeFor(1)],
        ['result.artifact-missing', rangeFor(2)],
        ['result.artifact-missing', rangeFor(3)],
      ],
    );
    assert.match(issues[1]?.message ?? '', /symbolic link to nothing/);
  });

  it('reports every entry as missing, without throwing, when the workspace folder does not exist', () => {
    const issues = checkArtifactPaths(path.join(root, 'nope'), resultWith(['README.md']));
    assert.deepEqual(
      issues.map((i) => i.code),
      ['result.artifact-missing'],
    );
  });

  it('works on a parsed result, pointing at the list entries in the artifact', () => {
    const text = [
      '```baton-result',
      'contract: baton-result-v1',
      'task: T1',
      'agent: coder',
      'status: PASS',
      'summary: ok',
      'artifacts:',
      '  - README.md',
      '  - /etc/passwd',
      '```',
      '',
    ].join('\n');
    const { result } = parseResultArtifact(text);
    assert.ok(result);
    const issues = checkArtifactPaths(workspace, result);
    assert.deepEqual(
      issues.map((i) => [i.code, i.range]),
      [['result.artifact-absolute', { start: { line: 9, column: 5 }, end: { line: 9, column: 16 } }]],
    );
  });

  describe("an sdd-result's artifacts/… paths: the run's files, as the seed (sdd-agent-platform) reads them", () => {
    const runId = 'R-20261207-seed';
    const sdd = (artifacts: string[]) => ({ ...resultWith(artifacts), contract: 'sdd-result-v1' as const });
    const run = () => ({
      workspace,
      runId,
      ownNames: ['artifacts/D-B1-implementer-001.md', 'artifacts/implementer-B1.md'],
    });
    let runArtifacts: string;

    beforeEach(() => {
      runArtifacts = path.join(workspace, '.baton', 'runs', runId, 'artifacts');
      fs.mkdirSync(runArtifacts, { recursive: true });
      fs.writeFileSync(path.join(runArtifacts, 'review-B1.md'), '# review\n');
    });

    it('resolves artifacts/x in .baton/runs/<run>/artifacts/, not in the workspace; other paths stay workspace-relative', () => {
      assert.deepEqual(checkArtifactPaths(workspace, sdd(['artifacts/review-B1.md', 'README.md']), run()), []);
      // The same entry in a baton-result is workspace-relative, as before: there is no artifacts/ folder there.
      assert.deepEqual(
        checkArtifactPaths(workspace, { ...resultWith(['artifacts/review-B1.md']) }, run()).map((i) => i.code),
        ['result.artifact-missing'],
      );
    });

    it("names the result itself by the delegation's name or the seed's <agent>-<task>.md: accepted though no such file is there", () => {
      assert.deepEqual(
        checkArtifactPaths(workspace, sdd(['artifacts/implementer-B1.md', 'artifacts/D-B1-implementer-001.md']), run()),
        [],
      );
    });

    it("result.artifact-missing for a file the run's folder does not hold, even where the workspace has one", () => {
      fs.mkdirSync(path.join(workspace, 'artifacts'));
      fs.writeFileSync(path.join(workspace, 'artifacts', 'notes.md'), 'in the workspace\n');
      const issues = checkArtifactPaths(workspace, sdd(['artifacts/notes.md']), run());
      assert.deepEqual(
        issues.map((i) => [i.code, i.range]),
        [['result.artifact-missing', rangeFor(0)]],
      );
      assert.match(issues[0]!.message, /\.baton\/runs\/R-20261207-seed\/artifacts\/notes\.md/);
    });

    it("result.artifact-outside-workspace for a link in the run's folder that leads out of it", () => {
      fs.symlinkSync(path.join(workspace, 'README.md'), path.join(runArtifacts, 'readme.md'));
      const issues = checkArtifactPaths(workspace, sdd(['artifacts/readme.md', 'artifacts/../README.md']), run());
      assert.deepEqual(
        issues.map((i) => [i.code, i.range]),
        [
          ['result.artifact-outside-workspace', rangeFor(0)],
          ['result.artifact-not-normalized', rangeFor(1)],
        ],
      );
      assert.match(issues[0]!.message, /outside the run's artifact folder/);
    });
  });
});
