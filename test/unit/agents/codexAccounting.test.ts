// Codex accounting (issue 25, item 5): its stream names no model, so its tokens are priced by the
// configured one and a usd budget binds it; a continued session counts only its own tokens.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentStreamParser,
  applyAgentEvent,
  emptyActivity,
  startingActivity,
  type AgentActivity,
} from '../../../src/engine/domain/agents/agentActivity';
import { budgetCrossings, costOf } from '../../../src/engine/domain/agents/budget';
import { recordAgentUsage } from '../../../src/engine/operations/agentUsage/recordAgentUsage';
import { sessionTotalsBefore } from '../../../src/engine/queries/agentUsage';
import { planText } from '../../support/cli';
import { EngineFixture } from '../../support/engineFixture';

const RESUMED = readFileSync(join(__dirname, '../../fixtures/agents/codex/resumed.jsonl'), 'utf8').split('\n');
const PRICES = { 'gpt-5-codex': { inputPerMTok: 1.25, outputPerMTok: 10 } };

function fold(from: AgentActivity, priorTotals?: { inputTokens: number; outputTokens: number }): AgentActivity {
  const parser = agentStreamParser('codex', priorTotals ? { priorTotals } : {});
  let activity = from;
  for (const line of RESUMED) for (const e of parser.feed(line)) activity = applyAgentEvent(activity, e);
  return activity;
}

describe('Codex accounting: priced by the configured model, a continued session counted once', () => {
  it('its stream names no model: from the configured model its tokens have a price, and a usd budget binds', () => {
    assert.equal(fold(emptyActivity()).model, undefined, 'the stream itself names none');
    const activity = fold(startingActivity({ model: 'gpt-5-codex' }), { inputTokens: 1201, outputTokens: 31 });
    assert.equal(activity.model, 'gpt-5-codex');
    const cost = costOf(activity, PRICES);
    assert.equal(cost.source, 'priced');
    assert.ok(Math.abs(cost.costUsd! - (1302 * 1.25 + 42 * 10) / 1e6) < 1e-12);
    const spent = { tokens: 1344, costUsd: cost.costUsd! };
    assert.deepEqual(
      budgetCrossings({ task: { usd: 0.001 } }, { run: spent, task: spent, agent: spent }).map((c) => c.unit),
      ['usd'],
    );
  });

  it('a model the stream reports replaces the configured one', () => {
    const activity = applyAgentEvent(startingActivity({ model: 'gpt-5-codex' }), {
      kind: 'session',
      sessionId: 's',
      model: 'o4-mini',
    });
    assert.equal(activity.model, 'o4-mini');
  });

  it('a continued session starts from what its earlier attempts of the task recorded in that session', async () => {
    const fixture = new EngineFixture();
    try {
      fixture.write('plan.md', planText([{ id: 'T1' }, { id: 'T2' }]));
      const engine = await fixture.open();
      const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const other = await engine.claimTask({ runId: first.runId, taskId: 'T2' });
      const store = await fixture.openStore();
      const usage = (delegationId: string, taskId: string, sessionId: string, inputTokens: number) =>
        store.transact((tx) =>
          recordAgentUsage(
            tx,
            {
              runId: first.runId,
              delegationId,
              taskId,
              agent: 'coder',
              kind: 'codex',
              permissions: { profile: 'edit' },
              activity: { ...emptyActivity(), sessionId, inputTokens, outputTokens: 31 },
            },
            fixture.fakeClock.now(),
          ),
        );
      await usage(first.delegation.id, 'T1', 'thread-1', 1201);
      await usage(other.delegation.id, 'T2', 'thread-1', 999); // another task: not this session's past
      const totals = await store.read((r) => sessionTotalsBefore(r, first.runId, 'T1', 'thread-1'));
      assert.deepEqual(totals, { inputTokens: 1201, outputTokens: 31 });
      // Fed to the parser, the thread's totals (2503 / 73) count only this attempt's 1302 / 42.
      const second = fold(startingActivity({}), totals);
      assert.deepEqual([second.inputTokens, second.outputTokens], [1302, 42]);
    } finally {
      await fixture.dispose();
    }
  });
});
