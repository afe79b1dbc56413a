import assert from 'node:assert/strict';
import { foreignLeaseGraceMs } from '../../../src/engine/domain/process';
import { selfIdentity } from '../../../src/engine/effects/processes/processes';
import { LeaseKeeper } from '../../../src/engine/executor/leaseKeeper';
import { readCoordinatorLease } from '../../../src/engine/queries/coordinatorLease';
import { openVerifyProcesses } from '../../../src/engine/queries/verifyProcesses';
import type { FileStore } from '../../../src/engine/store/fileStore';
import { endVerifyProcesses } from '../../../src/engine/usecases/endVerifyProcesses';
import { EngineFixture } from '../../support/engineFixture';

const LEASE_MS = 30_000;
const STOP_GRACE_SECONDS = 1;

/**
 * The coordinator lease as the watchdogs of its verify commands see it (docs/team.md,
 * "Failover"): the keeper tells until when it holds the run after each commit, and that it ran
 * out before it lets the run go; a successor on another host counts a watched verify command
 * there as ended only once the watchdog's time has passed since it took the run.
 */
describe('the coordinator lease and the verify commands it guards', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  /** A run (made by a claim) and its store, opened apart from the engine as a coordinator opens it. */
  async function aRun() {
    const engine = await fixture.open();
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    await engine.close();
    const store = await fixture.openStore();
    return { runId: claim.runId, delegationId: claim.delegation.id, store };
  }

  function keeper(runId: string, s: FileStore, told: number[], tell: () => boolean = () => true) {
    return new LeaseKeeper(
      { store: s, clock: fixture.fakeClock, log: () => undefined },
      { runId, holder: 'test', identity: selfIdentity(), leaseMs: LEASE_MS },
      () => undefined,
      (until) => {
        told.push(until);
        return tell();
      },
    );
  }

  it('tells the deadline the store holds after taking and after each renewal, and "now" before it lets go', async () => {
    const { runId, store: s } = await aRun();
    const clock = fixture.fakeClock;
    const told: number[] = [];
    const lease = keeper(runId, s, told);
    const takenAt = clock.now();
    assert.deepEqual(await lease.acquire(), { acquired: true });
    assert.equal(lease.fence.heldSince(), takenAt);
    assert.deepEqual(told, [takenAt + LEASE_MS]);
    assert.equal((await s.read((r) => readCoordinatorLease(r, runId)))!.expiresAt, takenAt + LEASE_MS);

    clock.advance(LEASE_MS / 3);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the renewal's commit
    const renewedAt = takenAt + LEASE_MS / 3;
    assert.deepEqual(told, [takenAt + LEASE_MS, renewedAt + LEASE_MS]);
    assert.equal((await s.read((r) => readCoordinatorLease(r, runId)))!.expiresAt, renewedAt + LEASE_MS);

    clock.advance(1000);
    await lease.release();
    assert.deepEqual(told.slice(2), [renewedAt + 1000]);
    assert.notEqual((await s.read((r) => readCoordinatorLease(r, runId)))!.releasedAt, undefined);
  });

  it('keeps the lease (it runs out by itself) when the watchdogs could not be told that it ended', async () => {
    const { runId, store: s } = await aRun();
    let writable = true;
    const lease = keeper(runId, s, [], () => writable);
    await lease.acquire();
    writable = false;
    await lease.release();
    const stored = await s.read((r) => readCoordinatorLease(r, runId));
    assert.equal(stored!.releasedAt, undefined, 'not released: a successor waits for the lease and the watchdogs');
  });

  it('counts a watched verify command on another host as ended once the watchdog’s time passed since the takeover', async () => {
    const { runId, delegationId, store: s } = await aRun();
    const clock = fixture.fakeClock;
    const record = (id: string, watched: boolean) =>
      s.transact((tx) =>
        tx.run(
          `INSERT INTO verify_processes (id, run_id, delegation_id, command_json, marker, pid, pid_start, host, started_at, watched)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [
            id,
            runId,
            delegationId,
            '["npm","test"]',
            `BATON_VERIFY_ID=${id}`,
            4242,
            '1',
            'machine-x',
            clock.now(),
            watched ? 1 : null,
          ],
        ),
      );
    await record('watched', true);
    await record('unwatched', false);
    const takenAt = clock.now();
    const successor = { assertHeld: () => Promise.resolve(), heldSince: () => takenAt };
    const config = { stopGraceSeconds: STOP_GRACE_SECONDS } as Parameters<typeof endVerifyProcesses>[0]['config'];
    const end = () =>
      endVerifyProcesses({ store: s, clock, fence: successor, config }, runId, delegationId, 'test', 1000);
    const open = async () => (await s.read((r) => openVerifyProcesses(r, runId))).map((v) => v.id).sort();

    clock.advance(foreignLeaseGraceMs(STOP_GRACE_SECONDS * 1000) - 1);
    const early = await end();
    assert.deepEqual(
      early.map((e) => e.confirmed),
      [false, false],
    );
    assert.match(early[0]!.note!, /its lease watchdog ends it by/);
    assert.deepEqual(await open(), ['unwatched', 'watched']);

    clock.advance(1);
    const later = await end();
    assert.deepEqual(
      later.map((e) => [e.confirmed, e.note]),
      [
        [true, 'verify `npm test` ended on machine-x by its lease watchdog (its coordinator lost the run)'],
        [false, 'verify command runs on another host (machine-x)'],
      ],
    );
    assert.deepEqual(await open(), ['unwatched'], 'the watched one is recorded as over; the other stays open');

    // Without a coordinator's fence (`baton stop` from a CLI), nothing on another host is confirmed.
    const fromCli = await endVerifyProcesses({ store: s, clock, config }, runId, delegationId, 'test', 1000);
    assert.deepEqual(
      fromCli.map((e) => e.confirmed),
      [false],
    );
  });
});
