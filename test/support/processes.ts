import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Live (non-zombie) processes whose environment holds exactly `marker` as one of its
 * variables (e.g. `BATON_WORKSPACE=<dir>`, `BATON_RUNTIME_ID=W-…`), this one excluded.
 */
export function processesCarrying(marker: string): number[] {
  const needle = Buffer.from(`\0${marker}\0`);
  return liveProcesses((pid) =>
    Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]).includes(needle),
  );
}

/** Live (non-zombie) processes whose working directory is `folder` or inside it, this one excluded. */
export function processesWorkingIn(folder: string): number[] {
  return liveProcesses((pid) => {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return cwd === folder || cwd.startsWith(`${folder}/`);
  });
}

/** The live processes (from /proc; none without it) that `matches`; one it may not read, or gone meanwhile, is not. */
function liveProcesses(matches: (pid: number) => boolean): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      if (matches(Number(name))) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
