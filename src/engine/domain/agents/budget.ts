import type { BatonConfig } from '../config';

/** Tokens and cost spent: cost undefined when nothing priced it. */
export interface Spend {
  tokens: number;
  costUsd?: number;
}

/** What a run has spent so far, the attempt in flight included. */
export interface SpendSoFar {
  run: Spend;
  task: Spend;
  agent: Spend;
}

/** One budget line crossed: which scope, which unit, the limit and what was spent. */
export interface BudgetCrossing {
  scope: 'run' | 'task' | 'agent';
  unit: 'usd' | 'tokens';
  limit: number;
  spent: number;
}

/**
 * The budget lines the spend has reached or passed (docs/workers.md, "Budgets"). A limit in
 * dollars counts only priced spend: a CLI that reports no cost and has no price in the config
 * is not stopped by a dollar limit — `baton doctor` and the docs say so.
 */
export function budgetCrossings(budget: BatonConfig['budget'], spent: SpendSoFar): BudgetCrossing[] {
  const crossings: BudgetCrossing[] = [];
  for (const scope of ['run', 'task', 'agent'] as const) {
    const limit = budget[scope];
    if (!limit) continue;
    if (limit.tokens !== undefined && spent[scope].tokens >= limit.tokens) {
      crossings.push({ scope, unit: 'tokens', limit: limit.tokens, spent: spent[scope].tokens });
    }
    const cost = spent[scope].costUsd;
    if (limit.usd !== undefined && cost !== undefined && cost >= limit.usd) {
      crossings.push({ scope, unit: 'usd', limit: limit.usd, spent: cost });
    }
  }
  return crossings;
}

export function describeCrossing(c: BudgetCrossing): string {
  const amount = (n: number): string =>
    c.unit === 'usd' ? `$${n.toFixed(4)}` : `${Math.round(n).toLocaleString('en-US')} tokens`;
  return `the ${c.scope} budget of ${amount(c.limit)} is used up (${amount(c.spent)} spent)`;
}

/**
 * The cost of an attempt: the CLI's own figure where it prices its calls, else its tokens at
 * the config's price for the model, else unknown.
 */
export function costOf(
  usage: { inputTokens: number; outputTokens: number; costUsd?: number; model?: string },
  prices: BatonConfig['prices'],
): { costUsd?: number; source?: 'cli' | 'priced' } {
  if (usage.costUsd !== undefined) return { costUsd: usage.costUsd, source: 'cli' };
  const price = usage.model ? prices[usage.model] : undefined;
  if (!price) return {};
  const costUsd = (usage.inputTokens * price.inputPerMTok + usage.outputTokens * price.outputPerMTok) / 1_000_000;
  return { costUsd, source: 'priced' };
}

/** The limits raised past the spend that crossed them, when a person approves a budget gate. */
export function raisedBudget(
  budget: BatonConfig['budget'],
  crossings: readonly BudgetCrossing[],
): BatonConfig['budget'] {
  const raised = structuredClone(budget);
  for (const c of crossings) {
    const limit = { ...raised[c.scope] };
    // Double what was spent: room for the attempt to finish without stopping again at once.
    limit[c.unit] = c.unit === 'usd' ? c.spent * 2 : Math.ceil(c.spent * 2);
    raised[c.scope] = limit;
  }
  return raised;
}

/** Whether the run's permission policy forbids the task's profile (it then waits at a gate instead of starting). */
export function forbiddenProfile(
  policy: BatonConfig['permissionPolicy'],
  task: { profile: 'read-only' | 'edit' | 'full'; risk: readonly string[] },
): string | undefined {
  if (policy.forbid.includes(task.profile)) return `the permission policy forbids the ${task.profile} profile`;
  for (const tag of task.risk) {
    if (policy.forbidForRisk[tag]?.includes(task.profile)) {
      return `the permission policy forbids the ${task.profile} profile for tasks tagged ${tag}`;
    }
  }
  return undefined;
}
