import { readdirSync, readFileSync } from 'node:fs';

/**
 * Live (non-zombie) processes whose environment holds exactly `marker` as one of its
 * variables (e.g. `BATON_WORKSPACE=<dir>`, `BATON_RUNTIME_ID=W-…`), this one excluded.
 */
export function processesCarrying(marker: string): number[] {
  const needle = Buffer.from(`\0${marker}\0`);
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      if (Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${name}/environ`)]).includes(needle))
        found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
