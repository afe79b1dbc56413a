// An agent for the MCP row of the agent bench (test/bench/agentStreamBench.ts): run as a process worker, it starts
// the attempt's MCP server (`baton mcp`, with its own BATON_* environment, as an agent CLI does from the config Baton
// writes for it), connects with the SDK's client over stdio, and calls `baton_progress` one call after another for
// $MCP_AGENT_SECONDS seconds, each note carrying the wall time it was sent (`at-<ms>`) so the bench can tell how old
// the note the views show is. Then it writes a PASS result where Baton asked and its own counts to
// $MCP_AGENT_STATS/<delegation>.json. With $MCP_AGENT_PLAIN=1 it only waits as long (the reference: no MCP at all).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const seconds = Number(process.env.MCP_AGENT_SECONDS ?? 10);
const delegationId = process.env.BATON_DELEGATION_ID ?? 'D-unknown';

async function main(): Promise<void> {
  const counts = { calls: 0, sent: 0, coalesced: 0, errors: 0 };
  if (process.env.MCP_AGENT_PLAIN === '1') await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  else {
    const env = Object.fromEntries(
      Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [process.env.MCP_AGENT_BATON_CLI!, 'mcp'],
      env,
      cwd: process.cwd(),
      stderr: 'inherit',
    });
    const client = new Client({ name: 'baton-bench-agent', version: '1.0.0' });
    await client.connect(transport);
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) {
      const answer = await client.callTool({ name: 'baton_progress', arguments: { note: `at-${Date.now()}` } });
      counts.calls++;
      const delivery = (answer.structuredContent as { delivery?: string } | undefined)?.delivery;
      if (answer.isError) counts.errors++;
      else if (delivery === 'sent') counts.sent++;
      else counts.coalesced++;
    }
    await client.close();
  }
  const taskId = /^D-([^-]+)-/.exec(delegationId)?.[1] ?? 'T';
  const artifact = process.env.BATON_ARTIFACT_PATH!;
  mkdirSync(dirname(artifact), { recursive: true });
  writeFileSync(
    artifact,
    [
      `# ${taskId}`,
      '',
      '```baton-result',
      'contract: baton-result-v1',
      `task: ${taskId}`,
      'agent: coder',
      'status: PASS',
      'summary: mcp bench agent',
      'artifacts: []',
      '```',
      '',
    ].join('\n'),
  );
  const stats = process.env.MCP_AGENT_STATS;
  if (stats) {
    mkdirSync(stats, { recursive: true });
    writeFileSync(join(stats, `${delegationId}.json`), JSON.stringify({ ...counts, seconds }));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`mcp bench agent: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
