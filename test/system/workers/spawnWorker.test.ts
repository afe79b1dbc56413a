import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../../../src/engine/index';
import { credentialVariables } from '../../../src/engine/domain/credentials';
import { spawnWorker } from '../../../src/engine/effects/processes/spawnSupervised';
import { makeTempDir } from '../../support/tempDir';

const node = (script: string) => ({
  workerId: 'w',
  argv: [process.execPath, '-e', script],
  env: { FROM_CONFIG: 'config' },
});

function procStat(pid: number): { pgrp: number; session: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pgrp: Number(fields[2]), session: Number(fields[3]) };
}

describe('workers: spawnWorker', () => {
  it('appends stdout and stderr to the log file and reports the exit code', async () => {
    const dir = makeTempDir('baton-spawn-');
    const logPath = join(dir, 'logs', 'w.log');
    writeFileSync(join(dir, 'pre'), '');
    const worker = await spawnWorker(
      node(`process.stdout.write('out line\\n'); process.stderr.write('err line\\n'); process.exitCode = 7`),
      { cwd: dir, logPath, env: {} },
    );
    assert.deepEqual(await worker.exited, { exitCode: 7, signal: null });
    assert.equal(readFileSync(logPath, 'utf8'), 'out line\nerr line\n');
    const again = await spawnWorker(node(`console.log('second')`), { cwd: dir, logPath, env: {} });
    await again.exited;
    assert.equal(readFileSync(logPath, 'utf8'), 'out line\nerr line\nsecond\n', 'appended, not overwritten');
  });

  it('gives the worker the BATON_* variables over the configured ones, in its own process group and session', async () => {
    const dir = makeTempDir('baton-spawn-');
    const out = join(dir, 'env.json');
    const worker = await spawnWorker(
      {
        workerId: 'w',
        argv: [
          process.execPath,
          '-e',
          `require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ a: process.env.BATON_RUN_ID, b: process.env.FROM_CONFIG, cwd: process.cwd() })); setTimeout(() => {}, 300)`,
        ],
        env: { FROM_CONFIG: 'config', BATON_RUN_ID: 'from config' },
      },
      { cwd: dir, logPath: join(dir, 'w.log'), env: { BATON_RUN_ID: 'R-7' } },
    );
    const stat = procStat(worker.identity.pid);
    assert.equal(stat.pgrp, worker.identity.pid, 'a process group of its own');
    assert.equal(stat.session, worker.identity.pid, 'a session of its own');
    assert.ok(worker.identity.startTime, 'identified by pid and start time');
    await worker.exited;
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), { a: 'R-7', b: 'config', cwd: dir });
  });

  it('does not hand the store URL (with the team database password) to a worker, unless its config sets it', async () => {
    const dir = makeTempDir('baton-spawn-');
    const saved = process.env.BATON_STORE_URL;
    process.env.BATON_STORE_URL = 'postgres://baton:secret@db.internal/team';
    try {
      const print = `process.stdout.write(String(process.env.BATON_STORE_URL))`;
      const plain = await spawnWorker(node(print), { cwd: dir, logPath: join(dir, 'plain.log'), env: {} });
      await plain.exited;
      assert.equal(readFileSync(join(dir, 'plain.log'), 'utf8'), 'undefined');
      const own = await spawnWorker(
        { ...node(print), env: { BATON_STORE_URL: 'postgres://own@elsewhere/db' } },
        { cwd: dir, logPath: join(dir, 'own.log'), env: {} },
      );
      await own.exited;
      assert.equal(readFileSync(join(dir, 'own.log'), 'utf8'), 'postgres://own@elsewhere/db');
    } finally {
      if (saved === undefined) delete process.env.BATON_STORE_URL;
      else process.env.BATON_STORE_URL = saved;
    }
  });

  it('withholds PGPASSWORD from a worker of a PostgreSQL store (credentialVariables), not of a file store', async () => {
    const dir = makeTempDir('baton-spawn-');
    const saved = process.env.PGPASSWORD;
    process.env.PGPASSWORD = 'team-db-secret';
    try {
      const print = `process.stdout.write(String(process.env.PGPASSWORD))`;
      const seen = async (name: string, withhold: string[], env?: Record<string, string>): Promise<string> => {
        const worker = await spawnWorker(
          { ...node(print), ...(env ? { env } : {}) },
          { cwd: dir, logPath: join(dir, `${name}.log`), env: {}, withhold },
        );
        await worker.exited;
        return readFileSync(join(dir, `${name}.log`), 'utf8');
      };
      assert.equal(await seen('postgres', credentialVariables({ kind: 'postgres' })), 'undefined');
      assert.equal(await seen('file', credentialVariables({ kind: 'file' })), 'team-db-secret');
      const own = await seen('own', credentialVariables({ kind: 'postgres' }), { PGPASSWORD: 'project-db' });
      assert.equal(own, 'project-db', 'a worker whose config sets it keeps its own');
    } finally {
      if (saved === undefined) delete process.env.PGPASSWORD;
      else process.env.PGPASSWORD = saved;
    }
  });

  it('refuses a command that does not exist or cannot be executed with a clear reason', async () => {
    const dir = makeTempDir('baton-spawn-');
    await assert.rejects(
      spawnWorker(
        { workerId: 'ghost', argv: ['baton-no-such-command'], env: {} },
        { cwd: dir, logPath: join(dir, 'w.log'), env: {} },
      ),
      (err: unknown) =>
        BatonError.is(err, 'worker.spawn-failed') &&
        err.message === 'Could not start worker "ghost" (baton-no-such-command): ENOENT.',
    );
    const script = join(dir, 'not-executable.sh');
    writeFileSync(script, '#!/bin/sh\necho hi\n');
    chmodSync(script, 0o644);
    await assert.rejects(
      spawnWorker({ workerId: 'noexec', argv: [script], env: {} }, { cwd: dir, logPath: join(dir, 'w.log'), env: {} }),
      (err: unknown) => BatonError.is(err, 'worker.spawn-failed') && /EACCES/.test(err.message),
    );
  });

  it('reports the signal that ended a worker', async () => {
    const dir = makeTempDir('baton-spawn-');
    const worker = await spawnWorker(node('setInterval(() => {}, 1000)'), {
      cwd: dir,
      logPath: join(dir, 'w.log'),
      env: {},
    });
    process.kill(worker.identity.pid, 'SIGTERM');
    assert.deepEqual(await worker.exited, { exitCode: null, signal: 'SIGTERM' });
  });
});
