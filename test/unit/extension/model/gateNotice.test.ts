// The gate notification's text and what a person reads who acts on a gate decided meanwhile.
import assert from 'node:assert/strict';
import type { Gate } from '../../../../src/engine/index';
import {
  describeDecision,
  gateNoticeMessage,
  plain,
  type OpenGateNotice,
} from '../../../../src/extension/model/gateNotice';

const gate = (n: number, extra: Partial<OpenGateNotice> = {}): OpenGateNotice => ({
  gateId: `G-${n}`,
  runId: 'R-1',
  kind: 'risk_approval',
  reason: `Task T${n} is tagged database; approve it before it runs.`,
  taskId: `T${n}`,
  taskTitle: `Task number ${n}`,
  ...extra,
});

/** The `[label](target)` links of a notification message, as VS Code finds them. */
const links = (message: string): Array<{ label: string; target: string }> =>
  [...message.matchAll(/\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi)].map((m) => ({
    label: m[1]!,
    target: m[2]!,
  }));

describe('the gate notification', () => {
  it('for a question says the agent asks, with Answer… (not Approve or Reject) for that gate', () => {
    const message = gateNoticeMessage([
      gate(4, { kind: 'question', reason: 'D-T4-coder-001 asks: Which database? Choices: postgres | sqlite.' }),
    ]);
    assert.match(message, /^Baton: T4 “Task number 4” asks a question \(G-4\): D-T4-coder-001 asks: Which database\?/);
    const found = links(message);
    assert.deepEqual(
      found.map((l) => l.label),
      ['Answer…', 'Show Gates'],
    );
    assert.match(found[0]!.target, /^command:baton\.answerQuestion\?/);
  });

  it('for one gate says which task waits and why, with Approve and Reject for that gate and Show Gates', () => {
    const message = gateNoticeMessage([gate(3)]);
    assert.match(
      message,
      /^Baton: T3 “Task number 3” waits for a decision \(G-3, risk approval\): Task T3 is tagged database; approve it before it runs\. /,
    );
    const found = links(message);
    assert.deepEqual(
      found.map((l) => l.label),
      ['Approve', 'Reject', 'Show Gates'],
    );
    const args = (target: string): unknown =>
      JSON.parse(decodeURIComponent(target.slice(target.indexOf('?') + 1)))[0] as unknown;
    assert.equal(found[0]!.target.split('?')[0], 'command:baton.approveGate');
    assert.deepEqual(args(found[0]!.target), { kind: 'gate', id: 'gate:G-3', runId: 'R-1', gateId: 'G-3' });
    assert.equal(found[1]!.target.split('?')[0], 'command:baton.rejectGate');
    assert.equal(found[2]!.target, 'command:baton.gates.focus');
  });

  it('a config_changed gate (run-wide, no task) is told like the others, by its id and kind', () => {
    const message = gateNoticeMessage([
      {
        gateId: 'G-9',
        runId: 'R-1',
        kind: 'config_changed',
        reason: '.baton/config.json no longer matches the worker definitions run R-1 froze: worker "next": `a` → `b`.',
      },
    ]);
    assert.match(
      message,
      /^Baton: G-9 waits for a decision \(G-9, config change\): \.baton\/config\.json no longer matches/,
    );
    assert.deepEqual(
      links(message).map((l) => l.label),
      ['Approve', 'Reject', 'Show Gates'],
    );
  });

  it('for several gates lists exactly the open ones, in order, each on its task', () => {
    const message = gateNoticeMessage([gate(1), gate(3), gate(4), gate(5)]);
    assert.match(message, /^Baton: 4 gates wait for a decision — G-1 T1 “Task number 1” \(risk approval\); G-3 /);
    assert.deepEqual(
      [...message.matchAll(/\bG-\d+\b/g)].map((m) => m[0]),
      ['G-1', 'G-3', 'G-4', 'G-5'],
    );
    assert.deepEqual(
      links(message).map((l) => l.label),
      ['Show Gates', 'Notification Settings'],
    );
  });

  it('carries no link a worker or a plan wrote: brackets in reasons and titles are neutralized', () => {
    const hostile = gate(7, {
      kind: 'manual_handoff',
      reason:
        'The worker reported BLOCKED on T7: [Approve](command:workbench.action.terminal.sendSequence?%5B%7B%7D%5D)',
      taskTitle: '[click](https://example.com)',
    });
    for (const message of [gateNoticeMessage([hostile]), gateNoticeMessage([hostile, gate(8)])]) {
      for (const link of links(message))
        assert.match(
          link.target,
          /^command:(baton\.|workbench\.action\.openSettings)/,
          `a link of ours: ${link.target}`,
        );
    }
    assert.equal(plain('[a](b)'), '(a)(b)');
  });

  it('an action on a gate decided meanwhile says who decided it and when, and that nothing changed', () => {
    const decided: Gate = {
      id: 'G-4',
      runId: 'R-1',
      taskId: 'T4',
      kind: 'risk_approval',
      status: 'approved',
      reason: 'r',
      details: {},
      openedAt: 0,
      decidedAt: 10_000,
      decidedBy: 'alice',
      note: 'looked at the schema',
    };
    assert.equal(
      describeDecision(decided, 72_000),
      'G-4 (risk approval of T4) was already approved by alice 1m 02s ago (“looked at the schema”); nothing changed.',
    );
    assert.equal(
      describeDecision(
        {
          ...decided,
          kind: 'ingestion_failed',
          decidedBy: 'baton',
          note: 'resolved: a valid PASS result was ingested',
        },
        12_000,
      ),
      'G-4 (rejected result of T4) was already approved by Baton 2s ago (“resolved: a valid PASS result was ingested”); nothing changed.',
    );
  });
});
