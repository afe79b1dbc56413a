import { cpSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { processesWorkingIn } from '../../support/processes';
import { FIXTURE_WORKSPACE } from './paths';

/**
 * A fresh temporary copy of a workspace folder (the integration fixture by default), so a
 * test never writes into the repository. Machine-local Baton state (`.baton/` except
 * `config.json` and `.gitignore`) is left behind. Returns the real path: the editor
 * reports real paths, and /tmp may be a link.
 */
export function copyWorkspace(source = FIXTURE_WORKSPACE, prefix = 'baton-ws-'): string {
  const parent = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const target = join(parent, basename(source));
  cpSync(source, target, {
    recursive: true,
    filter: (path) => {
      const rel = path.slice(source.length + 1).split(/[\\/]/);
      return !(rel[0] === '.baton' && rel.length > 1 && rel[1] !== 'config.json' && rel[1] !== '.gitignore');
    },
  });
  copies.set(target, parent);
  return target;
}

const copies = new Map<string, string>();

/**
 * Removes a folder made by copyWorkspace (its temporary parent too). Workers and coordinators
 * outlive the editor by design (a reload must not kill them), so whatever still runs in the
 * folder is killed first: otherwise it writes files while the folder is being removed
 * (ENOTEMPTY) and lives on after the test.
 */
export function removeWorkspace(workspace: string): void {
  const folder = copies.get(workspace) ?? workspace;
  for (const pid of processesWorkingIn(folder)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  rmSync(folder, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  copies.delete(workspace);
}
