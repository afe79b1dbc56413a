import { spawn } from 'node:child_process';

/**
 * Runs a (bundled) Node script as a child process to its end; resolves with its stdout lines, rejects with its stderr
 * tail.
 */
export function runScript(script: string, args: string[], env: Record<string, string> = {}): Promise<string[]> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolvePromise(out.trim().split('\n').filter(Boolean))
        : reject(new Error(`${script} exited ${code}: ${err.trim().split('\n').slice(-2).join(' | ')}`)),
    );
  });
}
