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

/** A worker a dollar limit cannot see: its CLI reports tokens but no cost, and nothing prices them. */
export interface UnpricedWorker {
  worker: string;
  type: 'codex' | 'gemini';
  /** The model it is configured with (undefined: the CLI's own default, unknown to Baton). */
  model?: string;
}

/**
 * The workers a `usd` budget does not bind (docs/workers.md, "Budgets"): Codex and Gemini CLI
 * report tokens but no cost, so their spend is priced from `prices` by model — without a
 * model or without a price for it, it counts as nothing against a dollar limit. Claude Code
 * and opencode price their own calls. None when no budget is in dollars.
 */
export function unpricedWorkers(config: Pick<BatonConfig, 'budget' | 'workers' | 'prices'>): UnpricedWorker[] {
  const inDollars = Object.values(config.budget).some((limit) => limit?.usd !== undefined);
  if (!inDollars) return [];
  const unpriced: UnpricedWorker[] = [];
  for (const [worker, definition] of Object.entries(config.workers)) {
    if (definition.type !== 'codex' && definition.type !== 'gemini') continue;
    if (definition.model !== undefined && config.prices[definition.model]) continue;
    unpriced.push({ worker, type: definition.type, ...(definition.model ? { model: definition.model } : {}) });
  }
  return unpriced;
}

/** The warning line for one: which worker, which model, what to do. */
export function describeUnpriced(u: UnpricedWorker): { message: string; recommendation: string } {
  const cli = u.type === 'codex' ? 'Codex' : 'Gemini CLI';
  return u.model
    ? {
        message: `The usd budget does not bind worker "${u.worker}": ${cli} reports tokens but no cost, and "prices" has no price for its model ${u.model}.`,
        recommendation: `Add "prices": { "${u.model}": { "inputPerMTok": …, "outputPerMTok": … } }, or limit it in tokens.`,
      }
    : {
        message: `The usd budget may not bind worker "${u.worker}": ${cli} reports tokens but no cost, and the worker names no model to price them by.`,
        recommendation: `Set its "model" and a price for that model in "prices", or limit it in tokens.`,
      };
}
