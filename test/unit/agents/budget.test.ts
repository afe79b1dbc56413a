import assert from 'node:assert/strict';
import {
  budgetCrossings,
  costOf,
  describeCrossing,
  forbiddenProfile,
  raisedBudget,
  unpricedWorkers,
} from '../../../src/engine/domain/agents/budget';
import { BUDGET_UNPRICED, parseConfig } from '../../../src/engine/domain/config';

const spend = (tokens: number, costUsd?: number) => ({ tokens, ...(costUsd !== undefined ? { costUsd } : {}) });

describe('budgets, prices and the permission policy (pure)', () => {
  it('a limit is crossed when the spend reaches it, per scope and unit', () => {
    const crossings = budgetCrossings(
      { run: { usd: 1 }, task: { tokens: 5000 }, agent: { usd: 5, tokens: 100_000 } },
      { run: spend(9000, 1.2), task: spend(5000, 0.5), agent: spend(9000, 1.2) },
    );
    assert.deepEqual(
      crossings.map((c) => `${c.scope}/${c.unit}`),
      ['run/usd', 'task/tokens'],
    );
    assert.equal(describeCrossing(crossings[0]!), 'the run budget of $1.0000 is used up ($1.2000 spent)');
  });

  it('a dollar limit does not count spend nothing priced', () => {
    assert.deepEqual(
      budgetCrossings({ run: { usd: 0.01 } }, { run: spend(1e9), task: spend(1e9), agent: spend(1e9) }),
      [],
    );
  });

  it('cost: the CLI’s own figure first, then the price table by model, else unknown', () => {
    const prices = { 'gpt-5.5': { inputPerMTok: 2, outputPerMTok: 8 } };
    assert.deepEqual(costOf({ inputTokens: 1, outputTokens: 1, costUsd: 0.5, model: 'gpt-5.5' }, prices), {
      costUsd: 0.5,
      source: 'cli',
    });
    assert.deepEqual(costOf({ inputTokens: 3906, outputTokens: 126, model: 'gpt-5.5' }, prices), {
      costUsd: (3906 * 2 + 126 * 8) / 1e6,
      source: 'priced',
    });
    assert.deepEqual(costOf({ inputTokens: 10, outputTokens: 10, model: 'unknown' }, prices), {});
  });

  it('approving a budget gate raises the crossed limits past what was spent', () => {
    const budget = { run: { usd: 1, tokens: 10 } };
    const raised = raisedBudget(budget, [{ scope: 'run', unit: 'usd', limit: 1, spent: 1.5 }]);
    assert.deepEqual(raised, { run: { usd: 3, tokens: 10 } });
    assert.deepEqual(budget, { run: { usd: 1, tokens: 10 } }, 'the old budget is not changed in place');
  });

  it('the permission policy forbids profiles outright, or by risk tag', () => {
    const policy = { forbid: ['full' as const], forbidForRisk: { production: ['edit' as const] } };
    assert.match(forbiddenProfile(policy, { profile: 'full', risk: [] }) ?? '', /forbids the full profile$/);
    assert.match(forbiddenProfile(policy, { profile: 'edit', risk: ['production'] }) ?? '', /tagged production/);
    assert.equal(forbiddenProfile(policy, { profile: 'edit', risk: ['database'] }), undefined);
  });

  it('a usd budget names the Codex and Gemini workers it cannot see: no model, or no price for it', () => {
    const config = parseConfig(
      JSON.stringify({
        workers: {
          cx: { type: 'codex', model: 'gpt-5-codex' },
          gm: { type: 'gemini' },
          priced: { type: 'codex', model: 'o4-mini' },
          cc: { type: 'claude-code' },
        },
        prices: { 'o4-mini': { inputPerMTok: 1, outputPerMTok: 4 } },
        budget: { task: { usd: 2 } },
      }),
    );
    assert.deepEqual(unpricedWorkers(config.config), [
      { worker: 'cx', type: 'codex', model: 'gpt-5-codex' },
      { worker: 'gm', type: 'gemini' },
    ]);
    const warnings = config.issues.filter((i) => i.code === BUDGET_UNPRICED);
    assert.deepEqual(
      warnings.map((i) => [i.severity, i.field, Boolean(i.range)]),
      [
        ['warning', 'workers.cx', true],
        ['warning', 'workers.gm', true],
      ],
    );
    assert.match(warnings[0]!.message, /worker "cx".*model gpt-5-codex/);
    assert.match(warnings[1]!.message, /worker "gm".*names no model/);
  });

  it('no budget in dollars (tokens only, or none): nothing to warn about', () => {
    const workers = {
      cx: {
        type: 'codex' as const,
        model: 'gpt-5-codex',
        executable: 'codex',
        args: [],
        env: {},
        continueSession: false,
      },
    };
    assert.deepEqual(unpricedWorkers({ workers, prices: {}, budget: { run: { tokens: 1000 } } }), []);
    assert.deepEqual(unpricedWorkers({ workers, prices: {}, budget: {} }), []);
  });
});
