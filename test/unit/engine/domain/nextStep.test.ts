import assert from 'node:assert/strict';
import { suggestNextStep } from '../../../../src/engine/domain/nextStep';
import type { RunStatus } from '../../../../src/engine/domain/types';

const run = (status: RunStatus) => ({ id: 'R-1', status });
const none = { gates: [], delegations: [] };
const gate = { id: 'G-1', status: 'open' as const, reason: 'T2 touches the database' };
const running = { id: 'D-T1-coder-001', status: 'RUNNING' as const };

describe('suggestNextStep: what baton diagnose suggests', () => {
  it('nothing for a complete run; status for a replanned one', () => {
    assert.deepEqual(suggestNextStep({ run: run('completed'), ...none }, false, []), {
      command: '',
      why: 'The run is complete.',
    });
    assert.equal(suggestNextStep({ run: run('superseded'), ...none }, true, []).command, 'baton status');
  });

  it('follow a coordinated run, whatever waits in it', () => {
    assert.equal(
      suggestNextStep({ run: run('running'), gates: [gate], delegations: [running] }, true, []).command,
      'baton events --run R-1 --follow',
    );
  });

  it('reconcile before deciding: an attempt RUNNING with no live worker', () => {
    const view = { run: run('running'), gates: [gate], delegations: [running] };
    assert.deepEqual(suggestNextStep(view, false, [{ delegationId: running.id, alive: null }]), {
      command: 'baton reconcile --run R-1',
      why: 'D-T1-coder-001 is RUNNING with no live worker.',
    });
    assert.match(
      suggestNextStep(view, false, [{ delegationId: running.id, alive: true }]).command,
      /^baton approve G-1/,
    );
  });

  it('a gate to decide, then replan a failed run, else resume', () => {
    assert.deepEqual(suggestNextStep({ run: run('paused'), gates: [gate], delegations: [] }, false, []), {
      command: 'baton approve G-1   (or baton reject G-1 --note …)',
      why: '1 gate waits for a decision: T2 touches the database',
    });
    assert.match(suggestNextStep({ run: run('failed'), ...none }, false, []).command, /^baton replan --run R-1/);
    assert.equal(suggestNextStep({ run: run('paused'), ...none }, false, []).command, 'baton resume --run R-1');
  });
});
