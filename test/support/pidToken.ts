import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The machine's pid of a process a worker named from inside its PID namespace (test/fixtures/workers/pidToken.js):
 * the process in namespace `ns` whose innermost NSpid is `pid`. A plain number is taken as it is. NaN when no such
 * process runs (it ended: nothing of it is left to find).
 */
export function hostPid(token: string): number {
  const at = token.indexOf('@');
  if (at < 0) return Number(token);
  return hostPidIn(token.slice(at + 1), Number(token.slice(0, at)));
}

/** The machine's pid of the process numbered `pid` inside the PID namespace `ns` (`pid:[…]`); NaN when none runs. */
export function hostPidIn(ns: string, pid: number): number {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/ns/pid`) !== ns) continue;
      const nspid = /^NSpid:\s*(.*)$/m
        .exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/);
      if (nspid && Number(nspid[nspid.length - 1]) === pid) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  return Number.NaN;
}
