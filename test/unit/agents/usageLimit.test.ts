import assert from 'node:assert/strict';
import { nextClockTime, usageLimitIn, usageLimitOf } from '../../../src/engine/domain/agents/usageLimit';
import {
  clockTime,
  parkUntil,
  quotaHoldOf,
  silenceOf,
  waitingForLimitReason,
} from '../../../src/engine/domain/parking';

// A fixed moment: 2026-12-06 12:00:00 UTC.
const NOW = Date.UTC(2026, 11, 6, 12, 0, 0);
const fatal = (message: string) => ({ kind: 'error' as const, message, fatal: true });

/** The limit messages the CLIs print, as their issue trackers quote them (docs/agents.md, "Usage limits park"). */
describe('usage limits: each CLI’s signal, with its reset', () => {
  describe('Claude Code', () => {
    it('reads the reset from "Claude AI usage limit reached|<epoch seconds>", also as the final text of an "ok" run', () => {
      const limit = usageLimitOf(
        'claude-code',
        { kind: 'end', ok: true, finalText: 'Claude AI usage limit reached|1765036800' },
        NOW,
      );
      assert.equal(limit?.resetAt, 1765036800_000);
      assert.match(limit!.said, /usage limit reached/);
    });

    it('reads "resets 3pm (Europe/Berlin)" as the next 15:00 in Berlin, and the API’s "regain access on … UTC"', () => {
      const limit = usageLimitIn('claude-code', '5-hour limit reached ∙ resets 3pm (Europe/Berlin)', NOW, {
        plainRateLimit: false,
      });
      assert.equal(limit?.resetAt, Date.UTC(2026, 11, 6, 14, 0)); // 15:00 CET
      const later = usageLimitIn(
        'claude-code',
        'Claude usage limit reached. Your limit will reset at 11am (UTC).',
        NOW,
        { plainRateLimit: false },
      );
      assert.equal(later?.resetAt, Date.UTC(2026, 11, 7, 11, 0), 'an hour already past today is tomorrow’s');
      const api = usageLimitIn(
        'claude-code',
        'Error: 400 {"message":"You have reached your specified API usage limits. You will regain access on 2026-12-31 at 00:00 UTC."}',
        NOW,
        { plainRateLimit: false },
      );
      assert.equal(api?.resetAt, Date.UTC(2026, 11, 31));
    });

    it('a fatal 429 parks without a reset; an answer that merely talks of rate limits, or a transient retry, does not', () => {
      const limit = usageLimitOf(
        'claude-code',
        fatal('API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}'),
        NOW,
      );
      assert.deepEqual(Object.keys(limit!), ['said']);
      assert.equal(usageLimitOf('claude-code', { ...fatal('429 Too Many Requests'), fatal: false }, NOW), undefined);
      const answer =
        'I added a rate limiter: requests over the limit get 429 Too Many Requests. Claude AI usage limit reached|1 is not a thing here.';
      assert.equal(usageLimitOf('claude-code', { kind: 'end', ok: true, finalText: answer }, NOW), undefined);
      assert.equal(
        usageLimitOf('claude-code', { kind: 'message', text: 'Claude AI usage limit reached|1765036800' }, NOW),
        undefined,
      );
    });
  });

  it('Codex: "try again in 4 days 20 hours 9 minutes", "try again at Jul 5th, 2027 8:19 PM", "Quota exceeded."', () => {
    const inDays = usageLimitOf(
      'codex',
      fatal(
        "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 4 days 20 hours 9 minutes.",
      ),
      NOW,
    );
    assert.equal(inDays?.resetAt, NOW + ((4 * 24 + 20) * 60 + 9) * 60_000);
    const at = usageLimitOf(
      'codex',
      fatal(
        "You've hit your usage limit. Upgrade to Plus to continue using Codex, or try again at Jul 5th, 2027 8:19 PM.",
      ),
      NOW,
    );
    assert.equal(at?.resetAt, new Date('Jul 5, 2027 8:19 PM').getTime());
    const quota = usageLimitOf(
      'codex',
      { kind: 'error', message: 'Quota exceeded. Check your plan and billing details.', fatal: false },
      NOW,
    );
    assert.ok(quota && quota.resetAt === undefined, 'its own message counts even when not fatal');
  });

  it('Gemini CLI: RESOURCE_EXHAUSTED with "Please retry in 34.5s", "reset after 2h13m"', () => {
    const retry = usageLimitOf(
      'gemini',
      fatal(
        '[API Error: {"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded for quota metric. Please retry in 34.5s."}]',
      ),
      NOW,
    );
    assert.equal(retry?.resetAt, NOW + 34_500);
    const capacity = usageLimitOf(
      'gemini',
      fatal('You have exhausted your capacity on this model. Your quota will reset after 2h13m.'),
      NOW,
    );
    assert.equal(capacity?.resetAt, NOW + (2 * 60 + 13) * 60_000);
  });

  it('opencode passes its provider’s message on: Anthropic’s epoch, OpenAI’s duration', () => {
    assert.equal(
      usageLimitOf('opencode', fatal('Claude AI usage limit reached|1765036800'), NOW)?.resetAt,
      1765036800_000,
    );
    const failedEnd = {
      kind: 'end' as const,
      ok: false,
      finalText: 'AI_APICallError: 429 Too Many Requests, retry after 60 seconds',
    };
    assert.equal(usageLimitOf('opencode', failedEnd, NOW)?.resetAt, NOW + 60_000);
  });

  it('the next clock time in a zone Node does not know falls back to the machine’s zone', () => {
    const at = nextClockTime(15, 0, 'Nowhere/Atlantis', NOW)!;
    assert.ok(at > NOW && at <= NOW + 86_400_000);
    assert.equal(new Date(at).getHours(), 15);
  });
});

describe('parking decisions (pure)', () => {
  it('parks until the named reset when it is ahead (at most a week), else quotaWaitSeconds from now', () => {
    assert.equal(parkUntil({ resetAt: NOW + 5000 }, NOW, 900), NOW + 5000);
    assert.equal(parkUntil({ resetAt: NOW - 5000 }, NOW, 900), NOW + 30_000, 'a reset already past: a short recheck');
    assert.equal(parkUntil({ resetAt: NOW - 5000 }, NOW, 10), NOW + 10_000, 'never longer than the default wait');
    assert.equal(parkUntil({}, NOW, 900), NOW + 900_000);
    assert.equal(parkUntil({ resetAt: NOW + 30 * 86_400_000 }, NOW, 900), NOW + 7 * 86_400_000);
  });

  it('a worker’s hold is its latest reset still ahead; other workers are free', () => {
    const holds = [
      { worker: 'claude', until: NOW + 1000 },
      { worker: 'claude', until: NOW + 9000 },
      { worker: 'codex', until: NOW - 1 },
    ];
    assert.deepEqual(quotaHoldOf(holds, 'claude', NOW), { worker: 'claude', until: NOW + 9000 });
    assert.equal(quotaHoldOf(holds, 'codex', NOW), undefined);
    assert.equal(quotaHoldOf(holds, 'claude', NOW + 9000), undefined, 'at the reset the hold ends');
  });

  it('says "waiting for usage limit until HH:MM" (with the date when not today), and "silent 5m" past silenceSeconds', () => {
    const soon = new Date(NOW);
    soon.setHours(soon.getHours() < 22 ? soon.getHours() + 1 : soon.getHours(), 7);
    assert.match(
      waitingForLimitReason(soon.getTime(), soon.getTime() - 1000),
      /^waiting for usage limit until \d\d:07$/,
    );
    assert.match(clockTime(NOW + 3 * 86_400_000, NOW), /^\d{4}-\d\d-\d\d \d\d:\d\d$/);
    assert.equal(silenceOf(299_000, 300), undefined);
    assert.equal(silenceOf(300_000, 300), 'silent 5m');
    assert.equal(silenceOf(2_500, 2), 'silent 2s');
    assert.equal(silenceOf(3_725_000, 300), 'silent 1h02m');
  });
});
