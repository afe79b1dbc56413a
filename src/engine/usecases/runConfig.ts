import { statSync } from 'node:fs';
import { DEFAULT_CONFIG, parseConfig } from '../domain/config';
import { configDigest, describeWorkerChange, diffWorkers, freezeWorkers, sha256Digest } from '../domain/frozenWorkers';
import { settingsDiffering } from '../domain/runSettings';
import { configPathOf } from '../effects/workspaceLayout';
import { noticeRunConfig, type ConfigNotice, type NoticeRunConfigInput } from '../operations/gates/configChangedGate';
import { readRunSettings } from '../queries/runs';
import type { EngineContext } from './context';
import { readConfigText } from './workspaceFiles';

/** What `status` and `diagnose` say about a run's config (docs/architecture.md, "Trust model"). */
export interface RunConfigView {
  runId: string;
  /** The worker definitions the run runs with; absent for a run from before Baton froze them (frozen at its resume). */
  frozen?: { digest: string; defaultWorker: string; workers: string[] };
  /** `.baton/config.json` now: its digest, or why it cannot be used. */
  file: { digest: string; invalid?: string };
  /** The file's worker definitions differ from the frozen ones (any worker, used or not). */
  workersDiffer: boolean;
  /** Each worker difference, for people (env keys, never values). */
  changes: string[];
  /** The other frozen settings the file now sets otherwise. */
  settings: string[];
  /** An open config_changed gate of the run. */
  openGate?: string;
}

/** `.baton/config.json` as the run's check needs it: parsed, or its first problem and a digest of its text. */
export function readCurrentConfig(workspace: string): NoticeRunConfigInput['current'] {
  const read = readConfigText(configPathOf(workspace));
  if (read.text === undefined && !read.problem) return { config: DEFAULT_CONFIG };
  if (read.problem) return { invalid: read.problem, digest: sha256Digest(`unreadable: ${read.problem}`) };
  const { config, issues } = parseConfig(read.text!);
  const error = issues.find((i) => i.severity === 'error');
  if (!error) return { config };
  const at = error.range ? ` (line ${error.range.start.line})` : '';
  return { invalid: `${error.message}${at}`, digest: sha256Digest(read.text!) };
}

/**
 * What identifies the config file's version without reading it (inode, size, times): a
 * coordinator reads and compares the file only when this changed since its last look.
 */
export function configFileStamp(workspace: string): string {
  try {
    const s = statSync(configPathOf(workspace), { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch (err) {
    return `absent:${(err as NodeJS.ErrnoException).code ?? ''}`;
  }
}

/**
 * Reads the config file and compares it with what the run froze (noticeRunConfig): a change is
 * told once as `config:changed`; a coordinator (`gate`) also opens, updates or resolves the
 * run's config_changed gate, and freezes a run from before frozen workers.
 */
export async function noticeConfigChange(
  ctx: EngineContext,
  runId: string,
  options: Omit<NoticeRunConfigInput, 'runId' | 'current'>,
): Promise<ConfigNotice> {
  const current = readCurrentConfig(ctx.workspace);
  return ctx.store.transact((tx) => noticeRunConfig(tx, { runId, current, ...options }, ctx.clock.now()));
}

/** The run's frozen definitions beside the config file as it is now. */
export async function describeRunConfig(ctx: EngineContext, runId: string): Promise<RunConfigView> {
  const { settings, openGate } = await ctx.store.read(async (r) => ({
    settings: await readRunSettings(r, runId),
    openGate: await r.get<{ id: string }>(
      `SELECT id FROM gates WHERE run_id = ? AND kind = 'config_changed' AND status = 'open' ORDER BY ordinal DESC LIMIT 1`,
      [runId],
    ),
  }));
  const current = readCurrentConfig(ctx.workspace);
  const config = 'config' in current ? current.config : undefined;
  const frozen = settings.workers;
  const changes = frozen && config ? diffWorkers(frozen, freezeWorkers(config)).map(describeWorkerChange) : [];
  return {
    runId,
    ...(frozen
      ? {
          frozen: {
            digest: frozen.digest,
            defaultWorker: frozen.defaultWorker,
            workers: Object.keys(frozen.workers).sort(),
          },
        }
      : {}),
    file: config
      ? { digest: configDigest(config) }
      : { digest: (current as { digest: string }).digest, invalid: (current as { invalid: string }).invalid },
    workersDiffer: changes.length > 0,
    changes,
    settings: config ? settingsDiffering(settings, config) : [],
    ...(openGate ? { openGate: openGate.id } : {}),
  };
}
