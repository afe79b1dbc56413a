import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The machine's pid of a process a worker named from inside its PID namespace (test/fixtures/workers/pidToken.js,
 * `<pid>@pid:[…]@<start>`): the process in that namespace whose innermost NSpid is `pid` and which started then. A
 * plain number is taken as it is. NaN when no such process runs (it ended: nothing of it is left to find).
 */
export function hostPid(token: string): number {
  const [pid, ns, start] = token.split('@');
  if (ns === undefined) return Number(token);
  return hostPidIn(ns, Number(pid), start);
}

/** The machine's pid of the process numbered `pid` inside the PID namespace `ns` (`pid:[…]`); NaN when none runs. */
export function hostPidIn(ns: string, pid: number, start?: string): number {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/ns/pid`) !== ns) continue;
      const nspid = /^NSpid:\s*(.*)$/m
        .exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]
        ?.trim()
        .split(/\s+/);
      if (!nspid || Number(nspid[nspid.length - 1]) !== pid) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') continue; // ended, not yet reaped
      if (start === undefined || fields[19] === start) return Number(name);
    } catch {
      // gone meanwhile
    }
  }
  return Number.NaN;
}

/** The fixture that makes a token, for a script a test writes (PID_TOKEN_EXPRESSION). */
export const PID_TOKEN_JS = resolve(__dirname, '../fixtures/workers/pidToken.js');

/** A JavaScript expression for the token of the process that evaluates it. */
export const PID_TOKEN_EXPRESSION = `require(${JSON.stringify(PID_TOKEN_JS)}).pidToken()`;
