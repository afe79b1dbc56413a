/**
 * Agent-stream row of `npm run bench` (issue "Real agent CLIs as first-class workers"): a fast
 * agent (test/bench/children/fastAgent.js, Claude Code's stream-json at 1,000 events/s) run
 * through the coordinator as the claude-code preset, its log followed live; how late the
 * heartbeats report what it does (the Workers view and the dashboard show the heartbeat's
 * progress as it is announced), and the CPU the coordinator spends per running agent — next
 * to the same process run as a plain worker whose log nobody follows (the reference).
 *
 *   node --import tsx test/bench/agentStreamBench.ts [--agents 1,4] [--seconds 10] [--rate 1000] [--reps 3]
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../../src/engine/index';
import { bundleScript } from '../support/bundleScript';
import { makeTempDir } from '../support/tempDir';
import { formatRate, percentile, summarize, type Summary } from './stats';

const FAST_AGENT = resolve(__dirname, 'children/fastAgent.js');
const BATON_CLI = resolve(__dirname, '../../dist/cli.js');

export interface AgentStreamBenchOptions {
  /** Agents running at once, one configuration each. */
  agents: number[];
  seconds: number;
  /** Events per second each agent writes. */
  rate: number;
  reps: number;
  log?: (line: string) => void;
}

export interface AgentStreamRow {
  agents: number;
  /** Heartbeats announced per agent per second while it ran. */
  beatsPerSecond: Summary;
  /** Heard − written, per heartbeat (ms): how old the activity a heartbeat shows is. */
  lagMs: { p50: Summary; p95: Summary; max: Summary };
  /** The last heartbeat before the result: how far behind the stream the views were at the end (ms). */
  lagAtEndMs: Summary;
  /** Coordinator CPU per running agent, in % of one core: followed (preset) and not followed (plain worker). */
  cpuPerAgentPct: Summary;
  referenceCpuPerAgentPct: Summary;
}

export interface McpProgressRow {
  agents: number;
  /** `baton_progress` calls each agent made per second, one after another (each answered before the next). */
  callsPerSecond: Summary;
  /** Notes the engine announced per agent per second (at most one a coalescing window reaches the views). */
  announcedPerSecond: Summary;
  /** Heard − sent, per announced note (ms): how old the note the Workers view shows is. */
  lagMs: { p50: Summary; p95: Summary };
  /** Coordinator CPU per running agent, in % of one core: agents calling baton_progress, and agents that only wait. */
  cpuPerAgentPct: Summary;
  referenceCpuPerAgentPct: Summary;
}

export interface AgentStreamBenchResult {
  options: AgentStreamBenchOptions;
  rows: AgentStreamRow[];
  mcp: McpProgressRow[];
}

export const AGENT_STREAM_TARGETS = { lagP95Ms: 2000 };

/** A plan of `agents` independent tasks, A1…An: one per agent running at once. */
function agentsPlan(agents: number): string {
  return Array.from({ length: agents }, (_, i) => `\`\`\`baton-task\nid: A${i + 1}\nagent: coder\n\`\`\`\nGo.\n`).join(
    '\n',
  );
}

interface OneRun {
  beats: number;
  lags: number[];
  lagAtEnd: number;
  cpuPct: number;
  wallMs: number;
}

async function runOnce(kind: 'preset' | 'plain', agents: number, options: AgentStreamBenchOptions): Promise<OneRun> {
  const workspace = makeTempDir('baton-bench-agents-');
  try {
    mkdirSync(join(workspace, '.baton'), { recursive: true });
    chmodSync(FAST_AGENT, 0o755);
    writeFileSync(
      join(workspace, '.baton', 'config.json'),
      JSON.stringify({
        defaultWorker: kind,
        maxConcurrency: agents,
        isolation: 'none',
        workers: {
          preset: { type: 'claude-code', executable: FAST_AGENT, env: {} },
          plain: {
            type: 'process',
            command: process.execPath,
            args: [FAST_AGENT],
            promptOnStdin: true,
            env: { FAST_AGENT_PLAIN: '1' },
          },
        },
      }),
    );
    writeFileSync(join(workspace, 'plan.md'), agentsPlan(agents));
    const saved = { rate: process.env.FAST_AGENT_RATE, seconds: process.env.FAST_AGENT_SECONDS };
    process.env.FAST_AGENT_RATE = String(options.rate);
    process.env.FAST_AGENT_SECONDS = String(options.seconds);
    const engine = await Engine.open({ workspace });
    const lags: number[] = [];
    const lastLag = new Map<string, number>();
    const listener = engine.onEvent((event) => {
      if (event.type !== 'runtime:heartbeat') return;
      const written = /at-(\d+)\.txt/.exec(event.data.progress ?? '')?.[1];
      if (!written) return;
      const lag = Date.now() - Number(written);
      lags.push(lag);
      lastLag.set(event.data.runtimeId, lag);
    });
    try {
      const { run } = await engine.runForPlan('plan.md');
      const taken = await engine.coordinate({ runId: run.id });
      if (!('coordinator' in taken)) throw new Error('the lease is not free');
      const cpu = process.cpuUsage();
      const started = Date.now();
      const outcome = await taken.coordinator.run();
      const wallMs = Date.now() - started;
      const used = process.cpuUsage(cpu);
      if (outcome.kind !== 'finished' || outcome.status !== 'completed') {
        const gates = await engine.listGates({ runId: run.id, status: 'open' });
        const why = gates.map((gate) => `${gate.kind}: ${gate.reason}`).join('; ');
        throw new Error(`the ${kind} bench run did not complete: ${JSON.stringify(outcome)} ${why}`);
      }
      const cpuPct = ((used.user + used.system) / 1000 / wallMs) * 100;
      const endLags = [...lastLag.values()];
      return {
        beats: lags.length,
        lags,
        lagAtEnd: endLags.length ? Math.max(...endLags) : Number.NaN,
        cpuPct: cpuPct / agents,
        wallMs,
      };
    } finally {
      listener.dispose();
      await engine.close();
      process.env.FAST_AGENT_RATE = saved.rate;
      process.env.FAST_AGENT_SECONDS = saved.seconds;
      if (saved.rate === undefined) delete process.env.FAST_AGENT_RATE;
      if (saved.seconds === undefined) delete process.env.FAST_AGENT_SECONDS;
    }
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

interface McpRun {
  calls: number;
  announced: number;
  lags: number[];
  cpuPct: number;
}

/**
 * One run of `agents` MCP agents (test/bench/children/mcpAgent.ts) as process workers, driven by a coordinator in
 * this process: `mcp` agents call `baton_progress` through their own `baton mcp` for `seconds`, `plain` ones only wait
 * as long. The coordinator's engine hears each note the server commits as a `runtime:heartbeat` event — what the
 * Workers view and the dashboard apply.
 */
async function runMcpOnce(kind: 'mcp' | 'plain', agents: number, options: AgentStreamBenchOptions): Promise<McpRun> {
  const workspace = makeTempDir('baton-bench-mcp-');
  const agent = bundleScript('test/bench/children/mcpAgent.ts');
  const stats = join(workspace, 'agent-stats');
  try {
    mkdirSync(join(workspace, '.baton'), { recursive: true });
    writeFileSync(
      join(workspace, '.baton', 'config.json'),
      JSON.stringify({
        defaultWorker: 'agent',
        maxConcurrency: agents,
        isolation: 'none',
        workers: {
          agent: {
            type: 'process',
            command: process.execPath,
            args: [agent],
            env: {
              MCP_AGENT_SECONDS: String(options.seconds),
              MCP_AGENT_BATON_CLI: BATON_CLI,
              MCP_AGENT_STATS: stats,
              ...(kind === 'plain' ? { MCP_AGENT_PLAIN: '1' } : {}),
            },
          },
        },
      }),
    );
    writeFileSync(join(workspace, 'plan.md'), agentsPlan(agents));
    // Following the store, as the editor's engine does: the notes are other processes' commits.
    const engine = await Engine.open({ workspace, follow: true });
    const lags: number[] = [];
    const listener = engine.onEvent((event) => {
      if (event.type !== 'runtime:heartbeat') return;
      const sent = /^at-(\d+)$/.exec(event.data.progress ?? '')?.[1];
      if (sent) lags.push(Date.now() - Number(sent));
    });
    try {
      const { run } = await engine.runForPlan('plan.md');
      const taken = await engine.coordinate({ runId: run.id });
      if (!('coordinator' in taken)) throw new Error('the lease is not free');
      const cpu = process.cpuUsage();
      const started = Date.now();
      const outcome = await taken.coordinator.run();
      const wallMs = Date.now() - started;
      const used = process.cpuUsage(cpu);
      if (outcome.kind !== 'finished' || outcome.status !== 'completed')
        throw new Error(`the ${kind} MCP bench run did not complete: ${JSON.stringify(outcome)}`);
      const counts = readdirSync(stats).map(
        (file) => JSON.parse(readFileSync(join(stats, file), 'utf8')) as { calls: number; errors: number },
      );
      const errors = counts.reduce((sum, c) => sum + c.errors, 0);
      if (errors > 0) throw new Error(`${errors} baton_progress call(s) were refused in the ${kind} MCP bench run`);
      return {
        calls: counts.reduce((sum, c) => sum + c.calls, 0),
        announced: lags.length,
        lags,
        cpuPct: (((used.user + used.system) / 1000 / wallMs) * 100) / agents,
      };
    } finally {
      listener.dispose();
      await engine.close();
    }
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function runMcpRows(options: AgentStreamBenchOptions): Promise<McpProgressRow[]> {
  const rows: McpProgressRow[] = [];
  for (const agents of options.agents) {
    const mcp: McpRun[] = [];
    const plain: McpRun[] = [];
    for (let rep = 0; rep < options.reps; rep++) {
      const order = rep % 2 === 0 ? (['mcp', 'plain'] as const) : (['plain', 'mcp'] as const);
      for (const kind of order) {
        const one = await runMcpOnce(kind, agents, options);
        (kind === 'mcp' ? mcp : plain).push(one);
        options.log?.(
          `MCP agents ${agents} ${kind} rep ${rep + 1}: ${one.calls} calls, ${one.announced} announced, ` +
            `CPU ${one.cpuPct.toFixed(1)}%/agent, lag p95 ${one.lags.length ? percentile(one.lags, 95) : '—'} ms`,
        );
      }
    }
    const perAgentSecond = (n: number): number => n / agents / options.seconds;
    rows.push({
      agents,
      callsPerSecond: summarize(mcp.map((r) => perAgentSecond(r.calls))),
      announcedPerSecond: summarize(mcp.map((r) => perAgentSecond(r.announced))),
      lagMs: {
        p50: summarize(mcp.map((r) => (r.lags.length ? percentile(r.lags, 50) : Number.NaN))),
        p95: summarize(mcp.map((r) => (r.lags.length ? percentile(r.lags, 95) : Number.NaN))),
      },
      cpuPerAgentPct: summarize(mcp.map((r) => r.cpuPct)),
      referenceCpuPerAgentPct: summarize(plain.map((r) => r.cpuPct)),
    });
  }
  return rows;
}

export async function runAgentStreamBench(options: AgentStreamBenchOptions): Promise<AgentStreamBenchResult> {
  const rows: AgentStreamRow[] = [];
  for (const agents of options.agents) {
    const preset: OneRun[] = [];
    const plain: OneRun[] = [];
    for (let rep = 0; rep < options.reps; rep++) {
      // Alternating which goes first: drift in the machine's load hits both alike.
      const order = rep % 2 === 0 ? (['preset', 'plain'] as const) : (['plain', 'preset'] as const);
      for (const kind of order) {
        const one = await runOnce(kind, agents, options);
        (kind === 'preset' ? preset : plain).push(one);
        options.log?.(
          `agents ${agents} ${kind} rep ${rep + 1}: ${one.beats} beats, CPU ${one.cpuPct.toFixed(1)}%/agent, ` +
            `lag p95 ${percentile(one.lags, 95)} ms, wall ${one.wallMs} ms`,
        );
      }
    }
    rows.push({
      agents,
      beatsPerSecond: summarize(preset.map((r) => r.beats / agents / options.seconds)),
      lagMs: {
        p50: summarize(preset.map((r) => percentile(r.lags, 50))),
        p95: summarize(preset.map((r) => percentile(r.lags, 95))),
        max: summarize(preset.map((r) => Math.max(...r.lags))),
      },
      lagAtEndMs: summarize(preset.map((r) => r.lagAtEnd)),
      cpuPerAgentPct: summarize(preset.map((r) => r.cpuPct)),
      referenceCpuPerAgentPct: summarize(plain.map((r) => r.cpuPct)),
    });
  }
  return { options, rows, mcp: await runMcpRows(options) };
}

const fmt = (s: Summary): string => `${formatRate(s.median)} (${formatRate(s.min)}–${formatRate(s.max)})`;

export function agentStreamSection(result: AgentStreamBenchResult): string {
  const { options } = result;
  const lines = [
    '## Agent streams: a fast agent → heartbeats → the views',
    '',
    `A stand-in agent writes Claude Code's stream-json at ${options.rate.toLocaleString('en-US')} events/s for ${options.seconds} s`,
    '(tool calls whose target carries the time they were written), run through the coordinator as the claude-code preset: its',
    'log is followed live and at most one heartbeat a second carries its activity. **Lag** is how old the activity a',
    'heartbeat shows is when the engine announces it (what the Workers view and the dashboard apply); **CPU** is the',
    "coordinator process's CPU per running agent, next to the same process run as a plain worker whose log nobody follows.",
    `Median of ${options.reps} repetitions (min–max), preset and plain alternating.`,
    '',
    '| Agents at once | Beats/s per agent | Lag p50 (ms) | Lag p95 (ms) | Lag max (ms) | Lag at the end (ms) | Coordinator CPU per agent | Plain worker (reference) | Ratio | Target | Holds |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|:-:|',
  ];
  for (const row of result.rows) {
    const ratio = row.cpuPerAgentPct.median / row.referenceCpuPerAgentPct.median;
    const holds = row.lagMs.p95.median <= AGENT_STREAM_TARGETS.lagP95Ms;
    lines.push(
      `| ${row.agents} | ${fmt(row.beatsPerSecond)} | ${fmt(row.lagMs.p50)} | ${fmt(row.lagMs.p95)} | ${fmt(row.lagMs.max)} | ${fmt(row.lagAtEndMs)} | ${fmt(row.cpuPerAgentPct)} % | ${fmt(row.referenceCpuPerAgentPct)} % | ${Number.isFinite(ratio) ? ratio.toFixed(2) : '—'}× | lag p95 ≤ ${AGENT_STREAM_TARGETS.lagP95Ms} ms | ${holds ? '✓' : '✗'} |`,
    );
  }
  lines.push(
    '',
    `**MCP progress notes.** Agents run as process workers, each with its own \`baton mcp\` (the attempt's MCP server, as`,
    'an agent CLI starts it from the config Baton writes), call `baton_progress` one call after another for',
    `${options.seconds} s, each note carrying the time it was sent. The server coalesces notes to at most one heartbeat a`,
    "window (docs/agents.md); **announced** counts the notes the coordinator's engine announced (what the Workers view",
    "applies), **lag** how old each was when announced; **CPU** is the coordinator process's, per agent, next to agents",
    'that only wait as long (the reference).',
    '',
    '| Agents at once | `baton_progress` calls/s per agent | Announced/s per agent | Lag p50 (ms) | Lag p95 (ms) | Coordinator CPU per agent | Waiting agents (reference) | Ratio |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const row of result.mcp) {
    const ratio = row.cpuPerAgentPct.median / row.referenceCpuPerAgentPct.median;
    lines.push(
      `| ${row.agents} | ${fmt(row.callsPerSecond)} | ${fmt(row.announcedPerSecond)} | ${fmt(row.lagMs.p50)} | ${fmt(row.lagMs.p95)} | ${fmt(row.cpuPerAgentPct)} % | ${fmt(row.referenceCpuPerAgentPct)} % | ${Number.isFinite(ratio) ? ratio.toFixed(2) : '—'}× |`,
    );
  }
  lines.push('', '<!-- agents:end -->', '');
  return lines.join('\n');
}

if (require.main === module) {
  const arg = (name: string, fallback: string): string => {
    const at = process.argv.indexOf(`--${name}`);
    return at >= 0 ? process.argv[at + 1]! : fallback;
  };
  runAgentStreamBench({
    agents: arg('agents', '1,4').split(',').map(Number),
    seconds: Number(arg('seconds', '10')),
    rate: Number(arg('rate', '1000')),
    reps: Number(arg('reps', '3')),
    log: (line) => process.stderr.write(`[bench] ${line}\n`),
  })
    .then((result) => process.stdout.write(agentStreamSection(result)))
    .catch((err: unknown) => {
      process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exitCode = 1;
    });
}
