import { createHash } from 'node:crypto';
import {
  closeSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { BatonError } from '../domain/errors';

/**
 * A short exclusive lock held around each write transaction of one store folder,
 * across every process on this host.
 *
 * On Linux it is an abstract-namespace Unix socket and on Windows a named pipe: binding
 * is atomic and exclusive, and the kernel releases it when the holder dies, so a
 * SIGKILLed process never leaves a stale lock behind and there is nothing to steal.
 * Elsewhere (macOS) it falls back to an O_EXCL lock file whose holder pid is checked;
 * see docs/architecture.md for the limits of that fallback.
 */
export interface ProcessLock {
  /** Tries once; true when this process now holds the lock. */
  tryAcquire(): boolean;
  release(): void;
  /** Who holds it now, where that can be told (Linux: /proc; the lock file's pid elsewhere). */
  holder(): LockHolder | undefined;
}

/** The process holding a store's lock, as a person would look it up. */
export interface LockHolder {
  pid: number;
  /** Stopped by a signal (Ctrl-Z, SIGSTOP, a debugger): it holds the lock until it is continued or ended. */
  stopped: boolean;
  /** Its command line, for the message (at most 120 characters). */
  command: string;
}

export function createProcessLock(storeDir: string): ProcessLock {
  const key = createHash('sha256').update(realpathSync(storeDir)).digest('hex').slice(0, 32);
  if (process.platform === 'linux') return new SocketLock(`\0baton-store-${key}`);
  if (process.platform === 'win32') return new SocketLock(`\\\\?\\pipe\\baton-store-${key}`);
  return new LockFile(join(storeDir, 'lock'));
}

class SocketLock implements ProcessLock {
  private server: Server | undefined;

  constructor(private readonly address: string) {}

  tryAcquire(): boolean {
    if (this.server) throw new Error('ProcessLock is not reentrant');
    const server = createServer();
    // Bind errors are reported on the next tick; `listening` already tells the outcome.
    server.on('error', () => undefined);
    server.listen({ path: this.address, exclusive: true });
    if (!server.listening) {
      server.close();
      return false;
    }
    server.unref();
    this.server = server;
    return true;
  }

  release(): void {
    this.server?.close();
    this.server = undefined;
  }

  holder(): LockHolder | undefined {
    if (process.platform !== 'linux') return undefined;
    const pid = socketOwner(this.address.slice(1));
    return pid === undefined ? undefined : describeProcess(pid);
  }
}

/**
 * The pid of the process listening on an abstract Unix socket: its inode from
 * /proc/net/unix (`@name`, listening), then the process with a descriptor on that inode.
 * Only processes of this user can be looked into — the only ones that share a store.
 */
function socketOwner(name: string): number | undefined {
  let inode: string | undefined;
  try {
    for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n')) {
      // The path column shows the name's leading NUL, and the NULs it is padded with, as '@'.
      const fields = line.trim().split(/\s+/);
      const path = fields[7];
      if (path?.startsWith(`@${name}`) && /^@*$/.test(path.slice(name.length + 1))) inode = fields[6];
    }
  } catch {
    return undefined;
  }
  if (!inode) return undefined;
  const link = `socket:[${inode}]`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // another user's, or gone
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${entry}/fd/${fd}`) === link) return Number(entry);
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

function describeProcess(pid: number): LockHolder | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return { pid, stopped: state === 'T' || state === 't', command: command.slice(0, 120) };
  } catch {
    return undefined; // gone meanwhile
  }
}

class LockFile implements ProcessLock {
  private held = false;

  constructor(private readonly path: string) {}

  tryAcquire(): boolean {
    try {
      const fd = openSync(this.path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      this.held = true;
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!this.holderIsAlive()) {
        try {
          unlinkSync(this.path);
        } catch {
          // Someone else removed it first; fall through and compete on the next try.
        }
      }
      return false;
    }
  }

  holder(): LockHolder | undefined {
    try {
      const pid = Number(readFileSync(this.path, 'utf8'));
      return Number.isInteger(pid) && pid > 0 ? { pid, stopped: false, command: '' } : undefined;
    } catch {
      return undefined;
    }
  }

  private holderIsAlive(): boolean {
    let pid: number;
    try {
      pid = Number(readFileSync(this.path, 'utf8'));
    } catch {
      return true; // being written or just removed: not provably dead
    }
    if (!Number.isInteger(pid) || pid <= 0) return true;
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}

export interface LockWait {
  /** Gives up after this long. */
  timeoutMs: number;
  sleep(ms: number): Promise<void>;
  monotonic(): number;
}

/** After this long waiting, the holder is looked at: one stopped by a signal will not let go by itself. */
const LOOK_AT_HOLDER_AFTER_MS = 300;

/**
 * Waits for the lock with a short backoff; the lock is only ever held for one commit. A
 * holder stopped by a signal (Ctrl-Z at the wrong moment) holds it until someone continues
 * or ends it: that is said at once (`store.holder-stopped`), with what to do, instead of
 * after the timeout.
 */
export async function acquireProcessLock(lock: ProcessLock, wait: LockWait, what: string): Promise<void> {
  const started = wait.monotonic();
  const deadline = started + wait.timeoutMs;
  let lookAt = started + LOOK_AT_HOLDER_AFTER_MS;
  let delay = 1;
  while (!lock.tryAcquire()) {
    const now = wait.monotonic();
    if (now >= lookAt) {
      lookAt = now + LOOK_AT_HOLDER_AFTER_MS;
      const holder = lock.holder();
      if (holder?.stopped) throw holderStopped(holder, what);
    }
    if (now >= deadline) {
      const holder = lock.holder();
      const who = holder ? ` (pid ${holder.pid}${holder.command ? `: ${holder.command}` : ''})` : '';
      throw new BatonError(
        'store.busy',
        `The Baton store at ${what} stayed locked by another process${who} for ${Math.round(wait.timeoutMs / 1000)} s; try again.`,
      );
    }
    await wait.sleep(delay);
    delay = Math.min(delay * 2, 25);
  }
}

/** What a person reads when a stopped process holds the store (docs/reliability.md, "A lock holder stopped"). */
export function holderStopped(holder: LockHolder, what: string): BatonError {
  return new BatonError(
    'store.holder-stopped',
    `The Baton store at ${what} is locked by pid ${holder.pid}${holder.command ? ` (${holder.command})` : ''}, which is stopped (Ctrl-Z or a debugger). Continue it (fg in its terminal, or kill -CONT ${holder.pid}), or end it (kill -KILL ${holder.pid}) and run baton resume to take its run over. Reading commands (status, diagnose, events) still answer.`,
  );
}
