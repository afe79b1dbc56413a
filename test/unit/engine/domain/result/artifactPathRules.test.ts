import assert from 'node:assert/strict';
import {
  artifactPathProblem,
  MAX_ARTIFACT_PATH_LENGTH,
} from '../../../../../src/engine/domain/result/artifactPathRules';

describe('artifact path rules that need no file system', () => {
  it('accepts normalized workspace-relative POSIX paths', () => {
    for (const p of ['README.md', 'src/notes/store.ts', 'a'.repeat(MAX_ARTIFACT_PATH_LENGTH), '..a/b']) {
      assert.equal(artifactPathProblem(p), undefined, p);
    }
  });

  it('names the first rule a path breaks, in order', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['', 'result.artifact-invalid-path', /empty/],
      ['a\0b', 'result.artifact-invalid-path', /NUL/],
      [
        'a'.repeat(MAX_ARTIFACT_PATH_LENGTH + 1),
        'result.artifact-invalid-path',
        /1025 characters long; the limit is 1024/,
      ],
      ['C:/x', 'result.artifact-invalid-path', /drive letter/],
      ['/etc/passwd', 'result.artifact-absolute', /absolute/],
      ['\\\\server\\share', 'result.artifact-absolute', /absolute/],
      ['../x', 'result.artifact-outside-workspace', /climbs out/],
      ['a/../../x', 'result.artifact-outside-workspace', /climbs out/],
      ['src\\a.ts', 'result.artifact-not-normalized', /backslash/],
      ['./a.ts', 'result.artifact-not-normalized', /a "\." segment/],
      ['src//a.ts', 'result.artifact-not-normalized', /an empty segment/],
      ['src/', 'result.artifact-not-normalized', /a trailing slash/],
      ['src/../a.ts', 'result.artifact-not-normalized', /a "\.\." segment/],
    ];
    for (const [p, code, message] of cases) {
      const problem = artifactPathProblem(p);
      assert.equal(problem?.code, code, JSON.stringify(p));
      assert.match(problem.message, message, JSON.stringify(p));
    }
  });

  it('recommends the fixed path where there is one, and shortens a long path in the message', () => {
    assert.equal(artifactPathProblem('src\\a.ts')?.recommendation, 'Use "/" as the separator: src/a.ts.');
    assert.equal(artifactPathProblem('src/./a.ts')?.recommendation, 'Write src/a.ts.');
    assert.match(artifactPathProblem(`/${'a'.repeat(200)}`)!.message, /^"\/a{116}…" is an absolute path\.$/);
  });
});
