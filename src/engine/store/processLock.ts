import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
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

/** Waits for the lock with a short backoff; the lock is only ever held for one commit. */
export async function acquireProcessLock(lock: ProcessLock, wait: LockWait, what: string): Promise<void> {
  const deadline = wait.monotonic() + wait.timeoutMs;
  let delay = 1;
  while (!lock.tryAcquire()) {
    if (wait.monotonic() >= deadline) {
      throw new BatonError(
        'store.busy',
        `The Baton store at ${what} stayed locked by another process for ${Math.round(wait.timeoutMs / 1000)} s; try again, or find the process with 'baton diagnose'.`,
      );
    }
    await wait.sleep(delay);
    delay = Math.min(delay * 2, 25);
  }
}
