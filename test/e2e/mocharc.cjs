// The e2e tier's mocha config (`npm run test:e2e`; test/README.md, "The e2e tier in two halves").
// BATON_E2E_HALF=1 or 2 runs one half of the tier's files: `npm test` runs the two halves side by
// side, each in a process of its own with its own code-server and Chromium (support/
// sharedCodeServer.ts is one per process). An e2e suite mostly waits — on the browser, the
// extension host, the workers it starts — so two at once on 2 cores take about half the time.
// The halves are split by weight, longest first (greedy): each file's seconds in a whole e2e run
// on a quiet machine (rounded); a file not listed counts as 20.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');

const WEIGHTS = {
  'test/e2e/runLifecycle.test.ts': 70,
  'test/e2e/decisions.test.ts': 55,
  'test/e2e/newRun.test.ts': 52,
  'test/e2e/gates.test.ts': 50,
  'test/e2e/reload.test.ts': 50,
  'test/e2e/demoRun.test.ts': 50,
  'test/e2e/dashboard.test.ts': 50,
  'test/e2e/team.test.ts': 40,
  'test/e2e/attempts.test.ts': 35,
  'test/e2e/mergeQueue.test.ts': 40,
  'test/e2e/followUp.test.ts': 45,
  'test/e2e/review.test.ts': 40,
  'test/e2e/addTask.test.ts': 35,
  'test/e2e/isolationRecovery.test.ts': 35,
  'test/e2e/agentActivity.test.ts': 33,
  'test/e2e/firstStart.test.ts': 25,
  'test/e2e/stop.test.ts': 16,
  'test/e2e/question.test.ts': 12,
  'test/e2e/attention.test.ts': 12,
};

const files = readdirSync('test/e2e')
  .filter((name) => name.endsWith('.test.ts'))
  .map((name) => `test/e2e/${name}`);
const weight = (file) => WEIGHTS[file] ?? 20;
const longestFirst = [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));

/** The files of half `n` (1 or 2): each file to the lighter half so far. */
function half(n) {
  const halves = [
    { files: [], total: 0 },
    { files: [], total: 0 },
  ];
  for (const file of longestFirst) {
    const lighter = halves[0].total <= halves[1].total ? halves[0] : halves[1];
    lighter.files.push(file);
    lighter.total += weight(file);
  }
  return halves[n - 1].files;
}

const which = process.env.BATON_E2E_HALF;
if (which !== undefined && which !== '1' && which !== '2')
  throw new Error(`BATON_E2E_HALF is "${which}": it is 1 or 2 (or unset, for the whole tier).`);
// `mocha --config test/e2e/mocharc.cjs test/e2e/foo.test.ts` runs that file only (as the system tier's config).
const filesGiven = process.argv.slice(2).some((arg) => arg.endsWith('.test.ts'));
const spec = which ? half(Number(which)) : longestFirst;

module.exports = {
  'node-option': ['import=tsx'],
  timeout: 180_000,
  reporter: 'spec',
  ...(filesGiven ? {} : { spec: spec.map((file) => join(file)) }),
};
