import assert from 'node:assert/strict';
import { isInsideFolder, pathsInWorkspace, workspacePath } from '../../../../src/engine/domain/workspacePath';

describe('workspace paths (no file system)', () => {
  it('workspacePath: relative with / inside the workspace, absolute outside it and for the workspace itself', () => {
    assert.equal(workspacePath('/ws', '/ws/results/T1.md'), 'results/T1.md');
    assert.equal(workspacePath('/ws', '/elsewhere/T1.md'), '/elsewhere/T1.md');
    assert.equal(workspacePath('/ws', '/ws'), '/ws');
    assert.equal(workspacePath('/ws', '/ws-other/a'), '/ws-other/a');
  });

  it('isInsideFolder: the folder and what is under it, not its neighbours or parents', () => {
    assert.equal(isInsideFolder('/ws', '/ws'), true);
    assert.equal(isInsideFolder('/ws', '/ws/a/b'), true);
    assert.equal(isInsideFolder('/ws', '/ws/..a'), true);
    assert.equal(isInsideFolder('/ws', '/'), false);
    assert.equal(isInsideFolder('/ws', '/ws-other/a'), false);
  });

  it('pathsInWorkspace: repository paths as a workspace inside the repository names them', () => {
    assert.deepEqual(pathsInWorkspace('/repo', '/repo', ['src/a.ts']), ['src/a.ts']);
    assert.deepEqual(pathsInWorkspace('/repo', '/repo/app', ['app/src/a.ts', 'lib/b.ts']), ['src/a.ts', '../lib/b.ts']);
  });
});
