import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  hostMessageSchema,
  parseHostMessage,
  parseWebviewMessage,
  webviewMessageSchema,
} from '../../../src/protocol/messages';
import { initialState, receive, reduce } from '../../../webview-ui/src/state';
import { HOST_EXAMPLES, snapshot, WEBVIEW_EXAMPLES } from './fixtures';

describe('dashboard protocol (src/protocol/messages.ts)', () => {
  it('accepts one example of every message type in each direction, and the examples cover every type', () => {
    for (const m of HOST_EXAMPLES) assert.deepEqual(parseHostMessage(m), { ok: true, message: m }, m.type);
    for (const m of WEBVIEW_EXAMPLES) assert.deepEqual(parseWebviewMessage(m), { ok: true, message: m }, m.type);
    const hostTypes = hostMessageSchema.options.map((o) => o.shape.type.value);
    const webviewTypes = webviewMessageSchema.options.map((o) => o.shape.type.value);
    assert.deepEqual(new Set(HOST_EXAMPLES.map((m) => m.type)), new Set(hostTypes));
    assert.deepEqual(new Set(WEBVIEW_EXAMPLES.map((m) => m.type)), new Set(webviewTypes));
  });

  it('rejects what is not in the protocol, with a readable reason: unknown types, wrong versions, extra or missing fields, wrong types', () => {
    const bad: unknown[] = [
      null,
      'ready',
      42,
      [],
      {},
      { type: 'hello' },
      { type: 'ready' },
      { type: 'ready', protocolVersion: 2 },
      { type: 'ready', protocolVersion: 1, extra: true },
      { type: 'approveGate' },
      { type: 'approveGate', gateId: '' },
      { type: 'approveGate', gateId: 'G-1', note: 'x'.repeat(2001) },
      { type: 'rejectGate', gateId: 'G-1' },
      { type: 'rejectGate', gateId: 'G-1', note: '   ' },
      { type: 'answerQuestion' },
      { type: 'answerQuestion', gateId: 'G-1', answer: 'yes' },
      { type: 'resolveConflict' },
      { type: 'stopRun', mode: 'now' },
      { type: 'openArtifact', path: 'a.md', line: 0 },
      { type: 'openArtifact', path: 'a.md', line: 1.5 },
      { type: 'requestTaskDetails', taskId: 7 },
      { type: 'runCommand', command: 'rm -rf /' },
    ];
    for (const value of bad) {
      const parsed = parseWebviewMessage(value);
      assert.equal(parsed.ok, false, JSON.stringify(value));
      assert.match((parsed as { error: string }).error, /^rejected a .+ message: /);
    }
    assert.equal(parseHostMessage({ ...snapshot(), protocolVersion: 0 }).ok, false);
    assert.equal(parseHostMessage({ ...snapshot(), tasks: [{ id: 'T1' }] }).ok, false);
    assert.equal(parseHostMessage({ type: 'heartbeats', now: -1, beats: [] }).ok, false);
    assert.equal(parseHostMessage({ type: 'notice', level: 'html', message: '<b>x</b>' }).ok, false);
  });

  it('rejects, without throwing, a message whose type is an object that cannot be turned into text (found by the fuzz below)', () => {
    for (const type of [{ toString: {} }, Object.create(null), [1, 2], Symbol('x')]) {
      const host = parseHostMessage({ type, protocolVersion: 1 });
      assert.equal(host.ok, false);
      assert.match((host as { error: string }).error, /^rejected a (object|symbol)-typed message: /);
      assert.equal(parseWebviewMessage({ type }).ok, false);
    }
  });

  it('fuzz: malformed host messages are all rejected and leave the state untouched (the same object)', () => {
    const connected = reduce(initialState(), snapshot(), 0);
    const validTypes = HOST_EXAMPLES.map((m) => m.type);
    // Take a valid message and break it: drop a field, set a field to junk, or add one.
    const broken = fc
      .tuple(
        fc.constantFrom(...HOST_EXAMPLES),
        fc.nat(),
        fc.oneof(fc.constant(undefined), fc.string(), fc.integer(), fc.constant(null), fc.object(), fc.double()),
        fc.constantFrom('drop', 'junk', 'add'),
      )
      .map(([message, pick, junk, how]) => {
        const copy: Record<string, unknown> = JSON.parse(JSON.stringify(message));
        const keys = Object.keys(copy).filter((k) => k !== 'type' || how === 'junk');
        const key = keys[pick % keys.length]!;
        if (how === 'drop' && key !== 'type') delete copy[key];
        else if (how === 'junk') copy[key] = junk;
        else copy[`x${pick}`] = junk;
        return copy;
      })
      .filter((m) => !hostMessageSchema.safeParse(m).success);
    const junk = fc.oneof(
      fc.anything(),
      fc.record({ type: fc.oneof(fc.constantFrom(...validTypes), fc.string()) }, { requiredKeys: [] }),
    );
    fc.assert(
      fc.property(
        fc.oneof(
          broken,
          junk.filter((m) => !hostMessageSchema.safeParse(m).success),
        ),
        (raw) => {
          const out = receive(connected, raw, 1);
          return out.state === connected && typeof out.error === 'string' && out.message === undefined;
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('fuzz: malformed webview messages are all rejected', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        const parsed = parseWebviewMessage(raw);
        return (
          parsed.ok === webviewMessageSchema.safeParse(raw).success &&
          (parsed.ok || parsed.error.startsWith('rejected a '))
        );
      }),
      { numRuns: 2000 },
    );
  });
});
