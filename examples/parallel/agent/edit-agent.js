#!/usr/bin/env node
// A deterministic stand-in for a coding agent that changes files: it reads its prompt on
// stdin, reports progress with `baton heartbeat`, writes the files agent/edits.json lists
// for its task into its working folder (the task's own git worktree), and reports PASS
// with those files as its artifacts. T2 and T3 both rewrite the README's first line: the
// planned conflict. T3 takes longest, so T2 is merged first and T3 conflicts.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const taskId = process.argv[2];
const plan = JSON.parse(fs.readFileSync(path.join(__dirname, 'edits.json'), 'utf8'))[taskId] || { steps: 1, files: {} };
const stepMs = Number(process.env.DEMO_AGENT_STEP_MS || 700);
const artifact = process.env.BATON_ARTIFACT_PATH;

function heartbeat(progress) {
  if (!process.env.BATON_CLI) return;
  try {
    execFileSync(process.execPath, [process.env.BATON_CLI, 'heartbeat', '--progress', progress], { stdio: 'ignore' });
  } catch {
    // a missed beat is not fatal: Baton renews the lease while this process lives
  }
}

process.stdin.resume();
process.stdin.on('end', () => {
  console.log(`edit agent: task ${taskId} in ${process.cwd()}`);
  let step = 0;
  const next = () => {
    if (step < plan.steps) {
      step++;
      heartbeat(`step ${step} of ${plan.steps}`);
      setTimeout(next, stepMs);
      return;
    }
    const files = Object.keys(plan.files);
    for (const file of files) {
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      fs.writeFileSync(file, plan.files[file]);
      console.log(`edit agent: wrote ${file}`);
    }
    fs.writeFileSync(
      artifact,
      [
        `# ${taskId}: done`,
        '',
        '```baton-result',
        'contract: baton-result-v1',
        `task: ${taskId}`,
        `agent: ${process.env.BATON_AGENT || (taskId === 'T1' ? 'coder' : 'writer')}`,
        'status: PASS',
        `summary: changed ${files.join(', ')}`,
        'artifacts:',
        ...files.map((f) => `  - ${f}`),
        '```',
        '',
      ].join('\n'),
    );
  };
  next();
});
