// The system tier's mocha config (`npm run test:system`; test/README.md, "The system tier in
// parallel"). Its tests mostly wait — on worker processes, CLI processes, git, PostgreSQL,
// lease timers — so on 2 cores several files run at once, each in a worker process of its own
// (mocha --parallel): a file's tests still run one after another, and a process-wide resource
// (the PostgreSQL cluster of test/support/postgresCluster.ts, the CLI build) is one per worker.
//
// Files start longest first, so that the last file to start is a short one and the run does
// not end on one long file while the other workers idle. The weights are a file's seconds in
// the tier's own run (four at once) on a quiet machine (2026-12-07, rounded to 5; a mocha root
// hook timing each file); a file not listed counts as short.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

/** Seconds a file took in the tier's run (quiet 2-core machine); the order matters, not the figures. */
const WEIGHTS = {
  'test/system/agents/realClisThroughBaton.test.ts': 255,
  'test/system/cli/postgresRestart.test.ts': 200,
  'test/system/reliability.test.ts': 140,
  'test/system/cli/recovery.test.ts': 130,
  'test/system/cli/postgresFailover.test.ts': 100,
  'test/system/bench.test.ts': 95,
  'test/system/cli/claimLimits.test.ts': 90,
  'test/system/cli/configTamper.test.ts': 90,
  'test/system/cli/postgresJoin.test.ts': 85,
  'test/system/isolation/isolation.test.ts': 85,
  'test/system/store/crash.test.ts': 85,
  'test/system/agents/realClis.test.ts': 80,
  'test/system/isolation/mergeQueue.test.ts': 75,
  'test/system/isolation/tamper.test.ts': 65,
  'test/system/executor/fencing.test.ts': 55,
  'test/system/store/claimRace.test.ts': 45,
  'test/system/cli/keptWork.test.ts': 40,
  'test/system/executor/resume.test.ts': 40,
  'test/system/cli/demo.test.ts': 35,
  'test/system/isolation/resolveConflict.test.ts': 30,
  'test/system/cli/seedContracts.test.ts': 30,
  'test/system/cli/refusals.test.ts': 30,
  'test/system/executor/coordinator.test.ts': 30,
  'test/system/isolation/reviewRequired.test.ts': 30,
  'test/system/cli/storeTransfer.test.ts': 25,
  'test/system/mcp/mcpServer.test.ts': 25,
  'test/system/executor/plantedLinks.test.ts': 25,
  'test/system/agents/agentAttempts.test.ts': 25,
  'test/system/cli/postgresSecret.test.ts': 25,
  'test/system/agents/claudeMcp.test.ts': 25,
};

const files = readdirSync('test/system', { recursive: true, encoding: 'utf8' })
  .filter((path) => path.endsWith('.test.ts'))
  .map((path) => join('test/system', path).split('\\').join('/'));
const weight = (file) => WEIGHTS[file] ?? 10;
const spec = [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
// `mocha --config test/system/mocharc.cjs test/system/cli/foo.test.ts` runs that file only: mocha adds a
// config's spec to the files on the command line, so the config names the tier's files only when none are given.
const filesGiven = process.argv.slice(2).some((arg) => arg.endsWith('.test.ts'));

module.exports = {
  'node-option': ['import=tsx'],
  // A hang detector, not a speed check: generous enough for a machine at load 10.
  timeout: 60_000,
  reporter: 'spec',
  exit: true,
  parallel: true,
  // Four at once on 2 cores: measured in test/README.md ("The system tier in parallel").
  jobs: Number(process.env.BATON_SYSTEM_JOBS ?? 4),
  ...(filesGiven ? {} : { spec }),
};
