import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_STATUSES, type Gate, type Run, type RunStatus, type Task } from '../../../../src/engine/index';
import type { RunStateCache } from '../../../../src/extension/model/runState';
import { delegationRow, gateRows, runActions, runsByPlace, taskRow } from '../../../../src/extension/model/viewRows';
import type { AttemptWorktree, Delegation } from '../../../../src/engine/index';

const ROOT = join(__dirname, '../../../..');

interface MenuItem {
  command: string;
  when: string;
}

/** The Runs view's context-menu entries of package.json. */
const MENU: MenuItem[] = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { menus: { 'view/item/context': MenuItem[] } };
  }
).contributes.menus['view/item/context'].filter((m) => m.when.includes('view == baton.runs'));

/**
 * Evaluates the `viewItem =~ /…/` or `viewItem == …` part of a when-clause against a row's
 * contextValue, as VS Code does (the rest of these clauses is `view == baton.runs`).
 */
function offered(contextValue: string): string[] {
  return MENU.filter((m) => {
    const regex = /viewItem =~ \/(.+)\/$/.exec(m.when);
    if (regex) return new RegExp(regex[1]!).test(contextValue);
    const equal = /viewItem == (\S+)$/.exec(m.when);
    return equal ? equal[1] === contextValue : true;
  }).map((m) => m.command);
}

const contextValueOf = (status: RunStatus): string =>
  `baton.run status=${status}${runActions(status)
    .map((a) => ` ${a}`)
    .join('')}`;

describe('Runs view rows: where a run goes, and what its menus offer', () => {
  const FINISHED: RunStatus[] = ['completed', 'failed', 'blocked', 'cancelled', 'superseded'];
  const GOING_ON: RunStatus[] = ['running', 'paused', 'stopping'];

  it('every run status is either going on or finished', () => {
    assert.deepEqual([...GOING_ON, ...FINISHED].sort(), [...RUN_STATUSES].sort());
  });

  it('offers neither Stop nor Resume nor Cancel on a finished run, and Remove from View only there', () => {
    for (const status of FINISHED) {
      const menu = offered(contextValueOf(status));
      for (const command of ['baton.stopRun', 'baton.stopRunImmediately', 'baton.resumeRun', 'baton.cancelRun'])
        assert.ok(!menu.includes(command), `${command} is not offered on a ${status} run`);
      assert.ok(menu.includes('baton.removeRun'), `Remove from View on a ${status} run`);
      assert.ok(menu.includes('baton.startNewRun'), `Start New Run on a ${status} run`);
    }
    for (const status of GOING_ON) {
      const menu = offered(contextValueOf(status));
      assert.ok(menu.includes('baton.cancelRun'), `Cancel on a ${status} run`);
      assert.ok(menu.includes('baton.resumeRun'), `Resume on a ${status} run`);
      assert.ok(!menu.includes('baton.removeRun'), `no Remove on a ${status} run`);
    }
    assert.ok(offered(contextValueOf('running')).includes('baton.stopRun'));
    assert.ok(!offered(contextValueOf('paused')).includes('baton.stopRun'), 'nothing to stop in a paused run');
    assert.ok(!offered(contextValueOf('superseded')).includes('baton.replanRun'), 'a superseded run was replanned');
    assert.ok(!offered(contextValueOf('cancelled')).includes('baton.replanRun'));
  });

  it('lists runs that go on at the top, finished ones under History, and leaves removed ones out', () => {
    const run = (id: string, status: RunStatus): Run => ({
      id,
      status,
      planPath: 'plan.md',
      planDigest: 'sha256:x',
      createdAt: 0,
      updatedAt: 0,
    });
    const runs = [run('R-4', 'running'), run('R-3', 'cancelled'), run('R-2', 'paused'), run('R-1', 'blocked')];
    const hidden = new Set(['R-1']);
    const { current, history } = runsByPlace({ runs }, (id) => hidden.has(id));
    assert.deepEqual(
      current.map((r) => r.id),
      ['R-4', 'R-2'],
    );
    assert.deepEqual(
      history.map((r) => r.id),
      ['R-3'],
    );
  });
});

describe('Gates view rows', () => {
  const GATE_MENU: MenuItem[] = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      contributes: { menus: { 'view/item/context': MenuItem[] } };
    }
  ).contributes.menus['view/item/context'].filter((m) => m.when.includes('view == baton.gates'));

  it('a config_changed gate (run-wide, no task) is a row like the others, with Approve and Reject', () => {
    const gate: Gate = {
      id: 'G-9',
      runId: 'R-1',
      kind: 'config_changed',
      status: 'open',
      reason: '.baton/config.json no longer matches the worker definitions run R-1 froze: worker "next": `a` → `b`.',
      details: {},
      openedAt: 0,
    };
    const [row] = gateRows({ openGates: () => [gate] } as unknown as RunStateCache);
    assert.equal(row!.row.label, 'G-9  config changed');
    assert.equal(row!.row.description, gate.reason);
    assert.deepEqual(row!.row.icon, ['settings-gear', 'charts.yellow']);
    const contextValue = row!.row.contextValue!;
    const commands = GATE_MENU.filter((m) => {
      const regex = /viewItem =~ \/(.+)\/$/.exec(m.when);
      return regex ? new RegExp(regex[1]!).test(contextValue) : true;
    }).map((m) => m.command);
    assert.ok(commands.includes('baton.approveGate') && commands.includes('baton.rejectGate'), commands.join(', '));
  });
});

describe('Runs view task rows', () => {
  it('a task held by its worker’s usage limit says until when beside its status; another reason stays in the tooltip', () => {
    // What a task row reads of its task.
    const task = (statusReason: string) =>
      ({ id: 'T1', title: 'Lay the ground', instructions: '', status: 'ready', statusReason }) as Task;
    const cache = (t: Task) =>
      ({
        overview: () => ({ tasks: [t], delegations: [], runtimes: [], usage: [] }),
        attempts: () => [],
        attemptEnds: () => new Map(),
        now: 0,
      }) as unknown as RunStateCache;
    const held = taskRow(cache(task('waiting for usage limit until 15:00')), 'R-1', 'T1');
    assert.equal(held.description, 'ready · waiting for usage limit until 15:00');
    const other = taskRow(cache(task('waits for T2: its files overlap (a / a)')), 'R-1', 'T1');
    assert.equal(other.description, 'ready');
  });
});

describe("an attempt's worktree in the Runs view's menus", () => {
  it('offers Open Worktree on the task and attempt rows while the attempt has a worktree, not once it was removed nor in the shared tree', () => {
    const attempt = {
      runId: 'R-1',
      id: 'D-T1-coder-001',
      taskId: 'T1',
      status: 'BLOCKED',
      startedAt: 1,
    } as Delegation;
    const worktree = (removedAt?: number) =>
      ({
        runId: 'R-1',
        delegationId: attempt.id,
        taskId: 'T1',
        ...(removedAt ? { removedAt } : {}),
      }) as AttemptWorktree;
    const cache = (worktrees?: AttemptWorktree[]) =>
      ({
        overview: () => ({
          tasks: [{ id: 'T1', title: 'Sign', instructions: '', status: 'gated' } as Task],
          delegations: [attempt],
          runtimes: [],
          usage: [],
          ...(worktrees ? { worktrees } : {}),
        }),
        attempts: () => [attempt],
        attemptEnds: () => new Map(),
        now: 0,
      }) as unknown as RunStateCache;
    const worktreeCommands = (c: RunStateCache) =>
      [taskRow(c, 'R-1', 'T1'), delegationRow(c, 'R-1', attempt.id)].map((row) =>
        offered(row.contextValue).filter((id) => id.startsWith('baton.openWorktree')),
      );
    const both = ['baton.openWorktree', 'baton.openWorktreeInTerminal'];
    assert.deepEqual(worktreeCommands(cache([worktree()])), [both, both]);
    assert.deepEqual(worktreeCommands(cache([worktree(5)])), [[], []], 'removed');
    assert.deepEqual(worktreeCommands(cache()), [[], []], 'the shared working tree');
  });
});
