import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

/**
 * The unit tier runs in this process only (test/README.md). `npm run test:unit` loads this
 * file (mocha --require), and its root hooks make every way node:child_process starts a
 * process throw, so a unit test that starts one fails and says where it belongs, instead of
 * making the tier slow and timing-sensitive.
 */

const STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

type Starter = (...args: unknown[]) => unknown;
const starters = childProcess as unknown as Record<(typeof STARTERS)[number], Starter>;

export class ProcessInUnitTier extends Error {
  constructor(starter: string, command: unknown) {
    super(
      `child_process.${starter}(${JSON.stringify(command)}) in the unit tier: a test that starts a process ` +
        'belongs in test/system (test/README.md).',
    );
    this.name = 'ProcessInUnitTier';
  }
}

/** Replaces every starter with one that throws ProcessInUnitTier; returns what puts them back. */
export function forbidProcesses(): () => void {
  const originals = STARTERS.map((name) => [name, starters[name]] as const);
  for (const name of STARTERS) {
    starters[name] = (command: unknown) => {
      throw new ProcessInUnitTier(name, command);
    };
  }
  // ES modules that imported these by name (execa, for one) see the replacements too.
  syncBuiltinESMExports();
  return () => {
    for (const [name, original] of originals) starters[name] = original;
    syncBuiltinESMExports();
  };
}

let restore: (() => void) | undefined;

/** Mocha root hooks: the whole run, from before the first suite's hooks to after the last. */
export const mochaHooks = {
  beforeAll(): void {
    restore = forbidProcesses();
  },
  afterAll(): void {
    restore?.();
    restore = undefined;
  },
};
