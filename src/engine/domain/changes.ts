/** One file an attempt changed, by its path in the repository (forward slashes). */
export interface FileChange {
  path: string;
  change: 'added' | 'modified' | 'deleted';
}

/**
 * What one attempt changed, as the editor's "Show Changes" shows it (docs/workers.md, "What an
 * attempt changed"): the files between two states of the repository, `before` always a commit,
 * `after` a commit or — while the work is not recorded yet — the live files of a folder.
 */
export type AttemptChanges =
  | {
      available: true;
      runId: string;
      delegationId: string;
      taskId: string;
      /**
       * `worktree`: the attempt's own worktree (its base → its branch head, or its uncommitted files);
       * `shared`: the shared working tree (as it was when the worker started → when it ended, or now);
       * `integrated`: the commit integration made on the target branch.
       */
      where: 'worktree' | 'shared' | 'integrated';
      /** One line for people, e.g. "integrated into main: 1a2b3c4d → 5e6f7a8b". */
      summary: string;
      /** The repository both states belong to (git reads the commits there). */
      repoRoot: string;
      before: string;
      /** `folder`: the top of the working tree whose files are the after side (repository paths resolve under it). */
      after: { commit: string } | { folder: string };
      files: FileChange[];
      /** Something the person should know about this comparison. */
      note?: string;
    }
  | { available: false; runId: string; delegationId: string; reason: string };
