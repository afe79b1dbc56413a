import assert from 'node:assert/strict';
import { linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BatonError } from '../../../src/engine/index';
import { appendBatonFile, ensureBatonFolder, writeBatonFile } from '../../../src/engine/effects/files/safeWrite';
import { makeTempDir } from '../../support/tempDir';

const refused = (err: unknown): boolean => BatonError.is(err, 'workspace.link-refused');

describe('safeWrite: files under .baton/ are never written through a link', () => {
  let workspace: string;
  let outside: string;
  let victim: string;
  beforeEach(() => {
    workspace = makeTempDir('baton-safe-');
    outside = makeTempDir('baton-outside-');
    victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'precious\n');
  });
  const run = (...parts: string[]) => join(workspace, '.baton', 'runs', 'R1', ...parts);

  it('creates missing folders one level at a time and writes, truncates and appends a plain file', () => {
    writeBatonFile(workspace, run('prompts', 'a.md'), 'first, longer\n');
    writeBatonFile(workspace, run('prompts', 'a.md'), 'second\n');
    appendBatonFile(workspace, run('prompts', 'a.md'), 'more\n');
    assert.equal(readFileSync(run('prompts', 'a.md'), 'utf8'), 'second\nmore\n');
  });

  it('refuses a link as the file, naming the path, and leaves its target alone', () => {
    mkdirSync(run('logs'), { recursive: true });
    symlinkSync(victim, run('logs', 'x.log'));
    assert.throws(
      () => appendBatonFile(workspace, run('logs', 'x.log'), 'evil'),
      (err: unknown) => {
        assert.ok(refused(err));
        assert.match((err as Error).message, /Refused to write .*logs\/x\.log: it is a link/);
        return true;
      },
    );
    assert.throws(() => writeBatonFile(workspace, run('logs', 'x.log'), 'evil'), refused);
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  });

  it('refuses a link anywhere between .baton/ and the file, .baton/ itself included', () => {
    mkdirSync(join(workspace, '.baton', 'runs'), { recursive: true });
    symlinkSync(outside, join(workspace, '.baton', 'runs', 'R1'));
    assert.throws(() => writeBatonFile(workspace, run('prompts', 'a.md'), 'evil'), /runs\/R1: it is a link/);
    const other = makeTempDir('baton-safe-');
    symlinkSync(outside, join(other, '.baton'));
    assert.throws(() => ensureBatonFolder(other, join(other, '.baton', 'runs')), refused);
    assert.deepEqual(readdirSync(outside), ['victim.txt'], 'no folder was created through the links');
  });

  it('refuses a hard link to a file outside, and a folder where a file should be', () => {
    mkdirSync(run('logs'), { recursive: true });
    linkSync(victim, run('logs', 'x.log'));
    assert.throws(() => writeBatonFile(workspace, run('logs', 'x.log'), 'evil'), /another hard link/);
    mkdirSync(run('logs', 'd.log'));
    assert.throws(() => writeBatonFile(workspace, run('logs', 'd.log'), 'x'), refused);
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  });

  it('refuses a folder outside .baton/', () => {
    assert.throws(() => ensureBatonFolder(workspace, join(workspace, 'src')), /is not under/);
    assert.throws(() => ensureBatonFolder(workspace, join(workspace, '.baton', '..', '..')), refused);
  });

  // One helper for every writer: a new direct write under src/engine would bypass the checks.
  it('is the only way the engine writes files (the store and git excepted)', () => {
    const root = resolve(__dirname, '../../../src/engine');
    // worktrees.ts writes git's info/exclude (in .git, not .baton/); spawnSupervised opens a log outside
    // any workspace only for a caller that names none (tests), every engine caller names one.
    const allowed = new Set(['effects/files/safeWrite.ts', 'effects/git/worktrees.ts']);
    const openForWritingAllowed = new Set(['effects/processes/spawnSupervised.ts']);
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        const rel = path.slice(root.length + 1);
        if (entry.isDirectory()) {
          if (rel !== 'store') walk(path);
        } else if (rel.endsWith('.ts') && !allowed.has(rel)) {
          const text = readFileSync(path, 'utf8');
          if (/\b(writeFileSync|appendFileSync|copyFileSync|createWriteStream|writeFile|appendFile)\s*\(/.test(text))
            offenders.push(rel);
          if (/openSync\([^)]*['"](a|w)\+?['"]/.test(text) && !openForWritingAllowed.has(rel))
            offenders.push(`${rel} (openSync for writing)`);
        }
      }
    };
    walk(root);
    assert.deepEqual(offenders, []);
  });
});
