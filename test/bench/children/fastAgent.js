#!/usr/bin/env node
// A fast agent for the agent-stream bench: speaks Claude Code's stream-json (as
// test/fixtures/workers/fakeClaude.js does) at $FAST_AGENT_RATE events per second for
// $FAST_AGENT_SECONDS seconds — tool_use / tool_result pairs whose target carries the wall
// time it was written, so the bench can measure how late a heartbeat reports it — then the
// final message with a result block. With $FAST_AGENT_PLAIN=1 it writes the same lines but is
// run as a plain process worker (the reference: the same process, nobody following its log).
const rate = Number(process.env.FAST_AGENT_RATE ?? 1000);
const seconds = Number(process.env.FAST_AGENT_SECONDS ?? 10);
let prompt = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (prompt += d));
process.stdin.on('end', run);

function run() {
  const task = /^# (\S+):/m.exec(prompt)?.[1] ?? 'T';
  const agent = /You are the "([^"]+)" agent/.exec(prompt)?.[1] ?? 'coder';
  const line = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
  line({
    type: 'system',
    subtype: 'init',
    session_id: `fast-${process.pid}`,
    cwd: process.cwd(),
    model: 'fast-1',
    tools: ['Write'],
  });
  const total = Math.round(rate * seconds);
  const started = Date.now();
  let sent = 0;
  const tick = () => {
    // Catch up to the schedule: `sent` events by now, in pairs (a call and its result).
    const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate));
    while (sent < due) {
      const n = sent >> 1;
      if (sent % 2 === 0)
        line({
          type: 'assistant',
          message: {
            id: `m${n}`,
            content: [{ type: 'tool_use', id: `t${n}`, name: 'Write', input: { file_path: `at-${Date.now()}.txt` } }],
            usage: { input_tokens: 10, output_tokens: 1 },
          },
        });
      else line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: `t${n}`, content: 'ok' }] } });
      sent++;
    }
    if (sent < total) setTimeout(tick, 5);
    else finish();
  };
  const finish = () => {
    const body = [
      'Done.',
      '',
      '```baton-result',
      'contract: baton-result-v1',
      `task: ${task}`,
      `agent: ${agent}`,
      'status: PASS',
      'summary: fast agent',
      'artifacts: []',
      '```',
      '',
    ].join('\n');
    line({ type: 'assistant', message: { id: 'final', content: [{ type: 'text', text: body }] } });
    line({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: body,
      total_cost_usd: 0.001,
      usage: { input_tokens: 10 * total, output_tokens: total },
    });
    if (process.env.FAST_AGENT_PLAIN === '1') {
      // A plain worker writes its result to the artifact: its log (10,000 lines at the bench's rate) is over the
      // 1 MiB an artifact may have, so "the log is the result" would reject it (docs/workers.md, "The result").
      require('node:fs').writeFileSync(process.env.BATON_ARTIFACT_PATH, body);
    }
  };
  tick();
}
