import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary folder per test, removed afterwards. */
export function useTempDir(prefix = 'baton-test-'): { readonly path: string } {
  const holder = { path: '' };
  beforeEach(() => {
    holder.path = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => {
    rmSync(holder.path, { recursive: true, force: true });
  });
  return holder;
}

export function makeTempDir(prefix = 'baton-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
