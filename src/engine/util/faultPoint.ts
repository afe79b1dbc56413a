/**
 * Named points where a crash test can kill this process (DESIGN §8, docs/reliability.md):
 * with BATON_FAULT_POINT=<name> in the environment, reaching that point ends the process
 * with SIGKILL — no cleanup, no finally blocks, as a power cut or `kill -9` would. Without
 * the variable a fault point is one environment lookup.
 */
export function faultPoint(name: string): void {
  if (process.env.BATON_FAULT_POINT === name) process.kill(process.pid, 'SIGKILL');
}
