import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { storeDirOf } from '../../src/engine/effects/workspaceLayout';
import { Engine, type AttemptCredential } from '../../src/engine/index';
import { FileStore } from '../../src/engine/store/fileStore';
import { FakeClock, sequentialIds } from './fakeClock';
import { makeTempDir } from './tempDir';

/** A workspace on disk with a plan, and engines on it driven by a fake clock. */
export class EngineFixture {
  readonly workspace = makeTempDir('baton-engine-');
  readonly clock: FakeClock | undefined;
  private readonly ids = sequentialIds();
  private readonly engines: Engine[] = [];
  private readonly stores: FileStore[] = [];

  private readonly env: NodeJS.ProcessEnv | undefined;

  /**
   * `realClock`: the system clock (for coordinator tests where workers run for real).
   * `postgres`: the workspace's store is this PostgreSQL database and schema (its config says so,
   * the URL comes in BATON_STORE_URL), not .baton/store.
   */
  constructor(options: { realClock?: boolean; postgres?: { url: string; schema: string } } = {}) {
    this.clock = options.realClock ? undefined : new FakeClock();
    if (options.postgres) {
      this.write(
        '.baton/config.json',
        JSON.stringify({ store: { kind: 'postgres', schema: options.postgres.schema } }),
      );
      this.env = { ...process.env, BATON_STORE_URL: options.postgres.url };
    }
  }

  /** A fixture with DEMO_PLAN in plan.md. */
  static withDemoPlan(): EngineFixture {
    const fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    return fixture;
  }

  get fakeClock(): FakeClock {
    if (!this.clock) throw new Error('this fixture runs on the real clock');
    return this.clock;
  }

  async open(options: { follow?: boolean; cliPath?: string } = {}): Promise<Engine> {
    const engine = await Engine.open({
      workspace: this.workspace,
      ...(this.clock ? { clock: this.clock } : {}),
      ids: this.ids,
      ...(this.env ? { env: this.env } : {}),
      ...options,
    });
    this.engines.push(engine);
    return engine;
  }

  /** Claims a task of plan.md as an external worker does and returns what binds a caller to that attempt. */
  static async claimCredential(engine: Engine, taskId: string, leaseSeconds = 60): Promise<AttemptCredential> {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId, leaseSeconds });
    return { runId: claim.runId, delegationId: claim.delegation.id, runtimeId: claim.runtimeId, token: claim.token };
  }

  write(relativePath: string, text: string): string {
    const path = join(this.workspace, relativePath);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  }

  /** A result artifact in the baton-result-v1 contract. */
  writeResult(
    name: string,
    fields: { task: string; agent?: string; status?: string; artifacts?: string[]; summary?: string },
  ): string {
    const artifacts = fields.artifacts ?? [];
    return this.write(
      `results/${name}`,
      [
        `# Result for ${fields.task}`,
        '',
        '```baton-result',
        'contract: baton-result-v1',
        `task: ${fields.task}`,
        `agent: ${fields.agent ?? 'coder'}`,
        `status: ${fields.status ?? 'PASS'}`,
        `summary: ${fields.summary ?? 'done'}`,
        artifacts.length ? `artifacts:\n${artifacts.map((a) => `  - ${a}`).join('\n')}` : 'artifacts: []',
        '```',
        '',
      ].join('\n'),
    );
  }

  /** The workspace's file store opened apart from any engine, as a coordinator opens it; closed by dispose(). */
  async openStore(): Promise<FileStore> {
    const store = await FileStore.open(storeDirOf(this.workspace));
    this.stores.push(store);
    return store;
  }

  async dispose(): Promise<void> {
    for (const store of this.stores.splice(0)) await store.close().catch(() => undefined);
    for (const engine of this.engines.splice(0)) await engine.close().catch(() => undefined);
    rmSync(this.workspace, { recursive: true, force: true });
  }
}

/** T1 → (T2 risk database, T3) → T4; T5 independent. */
export const DEMO_PLAN = `# Plan

\`\`\`baton-task
id: T1
title: Lay the ground
agent: coder
\`\`\`
Create the module.

\`\`\`baton-task
id: T2
title: Migrate the schema
agent: coder
depends: [T1]
risk: [database]
\`\`\`
Add the table.

\`\`\`baton-task
id: T3
title: Wire the command
agent: coder
depends: [T1]
\`\`\`
Add the command.

\`\`\`baton-task
id: T4
title: Review
agent: reviewer
depends: [T2, T3]
\`\`\`
Review it all.

\`\`\`baton-task
id: T5
title: Docs
agent: coder
\`\`\`
Write the docs.
`;
