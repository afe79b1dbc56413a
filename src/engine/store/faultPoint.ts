/**
 * Named points where a fault test can interrupt this process (docs/reliability.md): with
 * BATON_FAULT_POINT=<name> in the environment, reaching that point ends the process with
 * SIGKILL — no cleanup, no finally blocks, as a power cut or `kill -9` would.
 * BATON_FAULT_SKIP=<n> lets the first n passes through it go by. Without the variable a
 * fault point is one environment lookup.
 */
let passes = 0;

function reached(name: string): boolean {
  if (process.env.BATON_FAULT_POINT !== name) return false;
  // Once: a process stopped there and continued goes on past every later pass.
  return passes++ === Number(process.env.BATON_FAULT_SKIP ?? 0);
}

export function faultPoint(name: string): void {
  // SIGSTOP: stopped right there, holding whatever it holds (the store's lock), until SIGCONT.
  if (reached(name)) process.kill(process.pid, process.env.BATON_FAULT_SIGNAL === 'SIGSTOP' ? 'SIGSTOP' : 'SIGKILL');
}

/** Whether this process holds a store's cross-process lock (each open FileStore registers one). */
const lockProbes = new Set<() => boolean>();

export function registerLockProbe(probe: () => boolean): () => void {
  lockProbes.add(probe);
  return () => lockProbes.delete(probe);
}

/**
 * A fault point between a coordinator's check and its side effect. Like `faultPoint`, or,
 * with BATON_FAULT_SIGNAL=SIGSTOP, the process stops itself there (as Ctrl-Z or a debugger
 * would) until someone sends SIGCONT — at a moment it holds no store lock, so that the test
 * isolates the fence from the lock (a holder stopped with the lock is its own row of the
 * fault matrix). Until then the step waits; the rest of the process goes on.
 */
export async function sideEffectPoint(name: string): Promise<void> {
  if (!reached(name)) return;
  if (process.env.BATON_FAULT_SIGNAL !== 'SIGSTOP') process.kill(process.pid, 'SIGKILL');
  for (let waited = 0; [...lockProbes].some((held) => held()) && waited < 5000; waited++)
    await new Promise((resolve) => setTimeout(resolve, 1));
  process.kill(process.pid, 'SIGSTOP');
}
