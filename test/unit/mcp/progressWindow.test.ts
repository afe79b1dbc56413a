import assert from 'node:assert/strict';
import { admitProgress, PROGRESS_WINDOW_MS } from '../../../src/mcp/progressWindow';

describe('baton_progress rate window: at most one heartbeat per window, a later note coalesced to its end', () => {
  it('sends the first note, and one a window after the last sent', () => {
    assert.deepEqual(admitProgress({}, 5_000), { kind: 'send' });
    assert.deepEqual(admitProgress({ lastSentAt: 5_000 }, 5_000 + PROGRESS_WINDOW_MS), { kind: 'send' });
  });

  it('keeps a note within the window for its end; one that finds a note waiting replaces it', () => {
    assert.deepEqual(admitProgress({ lastSentAt: 5_000 }, 5_200), { kind: 'coalesce', sendAt: 6_000, replaced: false });
    assert.deepEqual(admitProgress({ lastSentAt: 5_000, pending: { note: 'a', sendAt: 6_000 } }, 5_900), {
      kind: 'coalesce',
      sendAt: 6_000,
      replaced: true,
    });
  });

  it('takes its window as given', () => {
    assert.deepEqual(admitProgress({ lastSentAt: 0 }, 99, 100), { kind: 'coalesce', sendAt: 100, replaced: false });
    assert.deepEqual(admitProgress({ lastSentAt: 0 }, 100, 100), { kind: 'send' });
  });

  it('after the clock went back, waits no longer than one window from now', () => {
    assert.deepEqual(admitProgress({ lastSentAt: 60_000 }, 10_000), {
      kind: 'coalesce',
      sendAt: 11_000,
      replaced: false,
    });
  });
});
