/** "1 task", "3 tasks", "0 tasks": a count with its noun, never "task(s)". `plural` for irregular nouns. */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
