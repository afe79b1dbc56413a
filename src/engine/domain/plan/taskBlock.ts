/**
 * A task written into a plan by a tool rather than typed (the editor's *Add Task…*): the next free
 * id and a well-formed `baton-task` block for it, in the format docs/plan-format.md describes.
 * Pure; what it writes parses back to the same task (test/unit/engine/plan/taskBlock.test.ts).
 */

export interface NewTask {
  id: string;
  title: string;
  /** The agent name (the plan's own, as its other tasks name it); absent: the format's default. */
  agent?: string;
  /** A worker of the config; absent: the run's default worker. */
  worker?: string;
  depends: readonly string[];
  /** The task's instructions, the text after its block. */
  instructions: string;
}

/** `T<n>` one past the highest `T<n>` of the plan (T1 for a plan with none), never an id in use. */
export function nextTaskId(ids: readonly string[]): string {
  const taken = new Set(ids);
  let n = Math.max(0, ...ids.map((id) => Number(/^T(\d+)$/.exec(id)?.[1] ?? 0))) + 1;
  while (taken.has(`T${n}`)) n++;
  return `T${n}`;
}

/**
 * The block and instructions for `task`, to append to a plan's text: a blank line before it
 * unless the text already ends with one. The title is a double-quoted YAML scalar (JSON is valid
 * YAML), so a colon or a `#` in it stays the title.
 */
export function taskBlockText(task: NewTask, planText: string): string {
  const lines = [
    '```baton-task',
    `id: ${task.id}`,
    `title: ${JSON.stringify(task.title.trim())}`,
    ...(task.agent ? [`agent: ${task.agent}`] : []),
    ...(task.worker ? [`worker: ${task.worker}`] : []),
    ...(task.depends.length ? [`depends: [${task.depends.join(', ')}]`] : []),
    '```',
    '',
    task.instructions.trim() || `Do ${task.id}.`,
    '',
  ];
  const lead = planText === '' || planText.endsWith('\n\n') ? '' : planText.endsWith('\n') ? '\n' : '\n\n';
  return lead + lines.join('\n');
}
