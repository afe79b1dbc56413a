#!/usr/bin/env node
// A deterministic stand-in for a coding agent, so the demo runs anywhere without an API key.
// It reads its prompt on stdin, reports progress with `baton heartbeat`, "works" for a few
// seconds, and writes a result artifact where Baton asked for it (BATON_ARTIFACT_PATH).
// Like a real agent, it signs its result as the agent its prompt names ("You are the
// "reviewer" agent"), so T5, the reviewer's task, passes like the others. Every task passes
// except T2, whose first result is deliberately invalid (wrong task, status DONE) so that the
// demo shows an ingestion issue. Like a real agent it reads what went wrong before: when its
// prompt lists the issues of an earlier result ("## What went wrong before"), it fixes the
// fields those issue codes name, so T2 repairs itself on the retry after its gate is approved.
// T6 reports PASS without doing the work, so its verify command fails and the demo shows a
// verification gate.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const taskId = process.argv[2];
const artifact = process.env.BATON_ARTIFACT_PATH;
const stepMs = Number(process.env.DEMO_AGENT_STEP_MS || 900);
const steps = ['reading the task', 'looking at the code', 'making the change', 'checking the result'];
// Tests start workers that must run long enough to be watched (a reload in the middle of them),
// then let them finish on cue instead of sitting out the rest: once DEMO_AGENT_HURRY_FILE exists,
// the steps left take no time.
const hurryFile = process.env.DEMO_AGENT_HURRY_FILE;

/** Calls `then` after `ms`, or as soon as the hurry file exists. */
function waitStep(ms, then) {
  if (!hurryFile) return void setTimeout(then, ms);
  const until = Date.now() + ms;
  const look = () => {
    const left = until - Date.now();
    if (left <= 0 || fs.existsSync(hurryFile)) then();
    else setTimeout(look, Math.min(left, 200));
  };
  look();
}

function heartbeat(progress) {
  if (!process.env.BATON_CLI) return;
  try {
    execFileSync(process.execPath, [process.env.BATON_CLI, 'heartbeat', '--progress', progress], { stdio: 'ignore' });
  } catch {
    // a missed beat is not fatal: Baton renews the lease while this process lives
  }
}

/** The agent Baton delegated the task to, as the prompt names it. */
function agentOf(prompt) {
  return /^You are the "([^"]+)" agent\./m.exec(prompt)?.[1] || process.argv[3] || 'coder';
}

/** The issue codes an earlier rejected result got, as the prompt's "What went wrong before" lists them. */
function earlierIssueCodes(prompt) {
  const section = prompt.split(/^## What went wrong before$/m)[1]?.split(/^## When you are done$/m)[0] ?? '';
  return new Set([...section.matchAll(/^- (?:line \d+, column \d+: )?`(result\.[a-z-]+)`/gm)].map((m) => m[1]));
}

function result(status, task, summary, agent) {
  return [
    `# ${taskId}: ${summary}`,
    '',
    'The demo agent did not change any files; it only shows how a result looks.',
    '',
    '```baton-result',
    'contract: baton-result-v1',
    `task: ${task}`,
    `agent: ${agent}`,
    `status: ${status}`,
    `summary: ${summary}`,
    'artifacts: []',
    '```',
    '',
  ].join('\n');
}

let prompt = '';
process.stdin.on('data', (chunk) => (prompt += chunk));
process.stdin.on('end', () => {
  const agent = agentOf(prompt);
  console.log(`fake agent: task ${taskId} as ${agent}, prompt of ${prompt.length} characters`);
  let step = 0;
  const next = () => {
    if (step < steps.length) {
      console.log(`fake agent: ${steps[step]}`);
      heartbeat(steps[step]);
      step++;
      waitStep(stepMs, next);
      return;
    }
    fs.mkdirSync(path.dirname(artifact), { recursive: true });
    if (taskId === 'T2') {
      // The fields the earlier issues name are fixed; the others stay as they were.
      const fix = earlierIssueCodes(prompt);
      const task = fix.has('result.task-mismatch') ? taskId : 'T3';
      const status = fix.has('result.invalid-status') ? 'PASS' : 'DONE';
      if (fix.size > 0) console.log(`fake agent: fixing what went wrong before: ${[...fix].join(', ')}`);
      fs.writeFileSync(artifact, result(status, task, 'added the notes commands', agent));
    } else fs.writeFileSync(artifact, result('PASS', taskId, `finished ${taskId}`, agent));
    console.log(`fake agent: wrote ${artifact}`);
  };
  next();
});
