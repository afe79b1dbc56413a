import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * How spawnSupervised puts a worker into a PID namespace of its own (docs/workers.md, "Process
 * identity"): the argv that starts its first process as the namespace's init, or why it cannot
 * here. A process cannot leave its PID namespace, and every process the worker starts — however
 * it detaches, whatever it resets — stays a descendant of that init; when the init dies the
 * kernel kills every member. Unprivileged users need a user namespace as well (`--user
 * --map-current-user`: the worker keeps its own uid). Looked up once per process.
 *
 * Inside, /proc is the namespace's own: pids there are the namespace's, and a token presented from
 * inside is judged by the namespace it comes from (domain/process.ts, `runsUnderWorker`).
 */
export type PidNamespaceLauncher = { argv: readonly string[]; user: boolean } | { unavailable: string };

let launcher: PidNamespaceLauncher | undefined;

/** The switch that turns namespaces off (a platform whose agents misbehave in one): the marker alone then. */
export const PID_NAMESPACE_ENV = 'BATON_PID_NAMESPACE';

export function pidNamespaceLauncher(): PidNamespaceLauncher {
  launcher ??= detect();
  return launcher;
}

function detect(): PidNamespaceLauncher {
  if (process.platform !== 'linux') return { unavailable: 'not Linux' };
  if (process.env.BATON_PID_NAMESPACE === 'off') return { unavailable: `${PID_NAMESPACE_ENV}=off` };
  const unshare = ['/usr/bin/unshare', '/bin/unshare', '/usr/sbin/unshare', '/sbin/unshare'].find((p) => existsSync(p));
  if (!unshare) return { unavailable: 'no unshare (util-linux) found' };
  // --kill-child: the namespace ends with the unshare process that holds it (its parent outside). --mount-proc: the
  // namespace sees a /proc of its own (in a mount namespace of its own). With the machine's /proc a pid a process
  // gets from fork() names another process there: a program that looks up its child (Codex's sandbox, bubblewrap,
  // writing the child's uid_map) then fails or hangs, and the worker would see every process of the machine.
  const pidOnly = [unshare, '--pid', '--fork', '--kill-child', '--mount-proc'];
  const withUser = [unshare, '--user', '--map-current-user', '--pid', '--fork', '--kill-child', '--mount-proc'];
  let why = '';
  for (const argv of [pidOnly, withUser]) {
    try {
      // The probe checks what a worker needs: its init is pid 1 of a namespace of its own.
      const out = execFileSync(argv[0]!, [...argv.slice(1), '/bin/sh', '-c', 'echo $$'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 10_000,
        encoding: 'utf8',
      });
      if (out.trim() === '1') return { argv, user: argv === withUser };
      why = `unexpected answer ${JSON.stringify(out.trim())}`;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr?.trim();
      why = stderr || (err as Error).message;
    }
  }
  return { unavailable: `unshare refused a PID namespace (${why.split('\n')[0]})` };
}

/** The PID namespace `pid` belongs to, as /proc names it (`pid:[4026532…]`); undefined if it cannot be read. */
export function pidNamespaceOf(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is the init (pid 1) of a PID namespace below this one: the last of its NSpid
 * pids (its pid in each namespace it belongs to, outermost first) is 1.
 */
export function isNamespaceInit(pid: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return false;
  }
  const pids = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
  return pids.length >= 2 && pids[pids.length - 1] === '1';
}
