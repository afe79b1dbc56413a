import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Engine } from '../../src/engine/index';
import { startPostgresCluster } from '../support/postgresCluster';
import { makeTempDir } from '../support/tempDir';

const seen: string[] = [];
let on = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const first = args[0];
  const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
  if (on) seen.push(text.replace(/\s+/g, ' ').slice(0, 150));
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

async function main() {
  const cluster = await startPostgresCluster({});
  const dir = makeTempDir('trace-');
  mkdirSync(join(dir, '.baton'), { recursive: true });
  mkdirSync(join(dir, 'results'), { recursive: true });
  writeFileSync(join(dir, '.baton/config.json'), JSON.stringify({ store: { kind: 'postgres', schema: 'tr' }, maxConcurrency: 256 }));
  const ids = ['T1', 'T2', 'T3'];
  writeFileSync(join(dir, 'plan.md'), ids.map((id) => '```baton-task\nid: ' + id + '\nagent: coder\n```\nDo ' + id + '.\n').join('\n'));
  for (const id of ids)
    writeFileSync(join(dir, 'results', `${id}.md`), '# r\n\n```baton-result\ncontract: baton-result-v1\ntask: ' + id + '\nagent: coder\nstatus: PASS\nsummary: ok\nartifacts: []\n```\n');
  const engine = await Engine.open({ workspace: dir, env: { BATON_STORE_URL: cluster.url } });
  const runId = (await engine.startRun('plan.md')).id;
  const cycle = async (taskId: string) => {
    const claim = await engine.claimTask({ runId, taskId, leaseSeconds: 600 });
    if (on) seen.push('--- heartbeat');
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'half' });
    if (on) seen.push('--- ingest');
    await engine.ingest({ delegationId: claim.delegation.id, token: claim.token, runId, artifactPath: `results/${taskId}.md` });
  };
  await cycle('T1');
  on = true;
  seen.push('--- claim');
  await cycle('T2');
  on = false;
  await engine.close();
  cluster.stop();
  console.log(seen.map((s, i) => `${i} ${s}`).join('\n'));
}
void main();
