/**
 * Named points where a crash test can kill this process (docs/reliability.md): with
 * BATON_FAULT_POINT=<name> in the environment, reaching that point ends the process with
 * SIGKILL — no cleanup, no finally blocks, as a power cut or `kill -9` would.
 * BATON_FAULT_SKIP=<n> lets the first n passes through it go by. Without the variable a
 * fault point is one environment lookup.
 */
let passes = 0;

export function faultPoint(name: string): void {
  if (process.env.BATON_FAULT_POINT !== name) return;
  if (passes++ < Number(process.env.BATON_FAULT_SKIP ?? 0)) return;
  process.kill(process.pid, 'SIGKILL');
}
