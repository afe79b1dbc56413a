import type { EventOf } from './events';
import { counted } from './plural';

/**
 * One line of plain text for an event, for people: the CLI's `events`, the dashboard's
 * timeline. Text a worker or a person wrote (progress, reasons, notes) passes through
 * `oneLine`: no control characters, at most `maxField` characters.
 */
export function describeEvent(e: EventOf, maxField = 100): string {
  const text = (value: string | undefined): string => (value === undefined ? '' : oneLine(value, maxField));
  const short = (commit: string): string => commit.slice(0, 8);
  switch (e.type) {
    case 'run:created':
      return `run created from ${text(e.data.planPath)} (${e.data.tasks} tasks)`;
    case 'run:status':
      return `run ${e.data.from} → ${e.data.to}${e.data.reason ? `  (${text(e.data.reason)})` : ''}`;
    case 'task:status':
      return `${text(e.data.taskId)} ${e.data.from} → ${e.data.to}${e.data.reason ? `  (${text(e.data.reason)})` : ''}`;
    case 'delegation:status':
      return `${text(e.data.delegationId)} ${e.data.from} → ${e.data.to}${e.data.reason ? `  (${text(e.data.reason)})` : ''}`;
    case 'run:resumed':
      return 'run resumed';
    case 'run:replanned':
      return `replanned from ${text(e.data.from)} (${counted(e.data.carried, 'task')} carried over)`;
    case 'delegation:created':
      return `${text(e.data.delegationId)} queued (task ${text(e.data.taskId)}, attempt ${e.data.attempt})`;
    case 'delegation:claimed':
      return `${text(e.data.delegationId)} claimed by runtime ${text(e.data.runtimeId)} (epoch ${e.data.epoch})`;
    case 'runtime:heartbeat':
      return `${text(e.data.runtimeId)} heartbeat ${e.data.heartbeatCount}${e.data.progress ? `: ${text(e.data.progress)}` : ''}`;
    case 'runtime:started':
      return `${text(e.data.delegationId)}: its worker ${e.data.found ? 'was found, running' : 'runs'} as pid ${e.data.pid} on ${text(e.data.host)}`;
    case 'runtime:exited':
      return `${text(e.data.delegationId)}: its worker ${e.data.signal ? `was killed by ${text(e.data.signal)}` : `exited with code ${String(e.data.exitCode)}`} at ${new Date(e.data.endedAt).toISOString()} while no coordinator watched (${e.data.handedInBy !== undefined ? `handed in by its lease watchdog on ${text(e.data.handedInBy)}` : 'its exit record'})`;
    case 'runtime:stale':
      return `${text(e.data.runtimeId)} went stale (${text(e.data.delegationId)})`;
    case 'delegation:prompt':
      return `${text(e.data.delegationId)} prompt ${e.data.sha256.slice(0, 12)} (${e.data.bytes} bytes${e.data.truncated ? ', truncated' : ''})`;
    case 'agent:usage': {
      const cost = e.data.costUsd !== undefined ? `, $${e.data.costUsd.toFixed(4)}` : '';
      return `${text(e.data.delegationId)} ${text(e.data.kind)}: ${counted(e.data.turns, 'turn')}, ${counted(e.data.toolCalls, 'tool call')}, ${counted(e.data.inputTokens + e.data.outputTokens, 'token')}${cost}`;
    }
    case 'gate:opened':
      return `${text(e.data.gateId)} opened (${e.data.kind}): ${text(e.data.reason)}`;
    case 'gate:decided':
      return `${text(e.data.gateId)} ${e.data.decision} by ${text(e.data.by)}${e.data.note ? `: ${text(e.data.note)}` : ''}`;
    case 'gate:answered':
      return `${text(e.data.gateId)} answered by ${text(e.data.by)} for ${text(e.data.delegationId)}: ${text(e.data.answer)}`;
    case 'gate:updated':
      return `${text(e.data.gateId)} updated: ${text(e.data.reason)}`;
    case 'ingestion:recorded':
      // The ingestion's own id means nothing to a person: the attempt's result does.
      return `the result of ${text(e.data.delegationId)} ${e.data.accepted ? `accepted: ${e.data.resultStatus ?? ''}` : `rejected: ${counted(e.data.issues, 'issue')}`}`;
    case 'result:checked':
      return `${text(e.data.delegationId)} result checked before it ended (round ${e.data.round}): ${e.data.issues === 0 ? 'no issues' : `${counted(e.data.issues, 'issue')}${e.data.sentBack ? ', sent back to the agent' : ', left to ingestion'}`}`;
    case 'verification:receipt':
      return `${text(e.data.delegationId)} \`${text(e.data.command.join(' '))}\` ${e.data.timedOut ? 'timed out' : `exited ${String(e.data.exitCode)}`} (${e.data.durationMs} ms)`;
    case 'coordinator:acquired':
      return `coordinated by ${text(e.data.holder)} (epoch ${e.data.epoch})${e.data.tookOverFrom ? `, taking over from ${text(e.data.tookOverFrom)}` : ''}`;
    case 'coordinator:released':
      return e.data.handedOver
        ? `coordinator (epoch ${e.data.epoch}) handed the run over with ${counted(e.data.handedOver.workers, 'worker')} still running`
        : `coordinator (epoch ${e.data.epoch}) let go`;
    case 'coordinator:joined':
      return `${text(e.data.holder)} joined the run to execute its tasks (epoch ${e.data.epoch})`;
    case 'coordinator:left':
      return e.data.lapsed
        ? `${text(e.data.holder)} (epoch ${e.data.epoch}) stopped renewing its place and was retired`
        : `${text(e.data.holder)} (epoch ${e.data.epoch}) left the run`;
    case 'stop:requested':
      return `${text(e.data.stopId)} ${e.data.mode} stop of ${text(e.data.delegationId) || 'the run'} requested by ${text(e.data.by)}`;
    case 'stop:applied':
      return `${text(e.data.stopId)} applied to ${counted(e.data.attempts, 'attempt')}${e.data.confirmed ? '' : '; some termination NOT confirmed'}`;
    case 'integration:committed':
      return `${text(e.data.delegationId)} committed as ${short(e.data.sourceHead)} (${counted(e.data.changedFiles, 'file')} changed)`;
    case 'review:dropped':
      return `${text(e.data.by)} dropped ${counted(e.data.files.length, 'file')} of ${text(e.data.delegationId)} from its integration (${e.data.files.map((f) => text(f)).join(', ')}); it integrates ${short(e.data.sourceHead)}`;
    case 'worktree:carried':
      return `${text(e.data.delegationId)} starts from ${text(e.data.fromDelegationId)}'s held work (${short(e.data.commit)}), not the target branch`;
    case 'integration:resolving':
      return `${e.data.move === 'merge' ? `${text(e.data.targetBranch)} merged into the worktree of ${text(e.data.delegationId)}` : `the worktree of ${text(e.data.delegationId)} rebased onto ${text(e.data.targetBranch)}`} to resolve ${text(e.data.gateId)}: ${e.data.files.length > 0 ? `conflicts in ${text(e.data.files.join(', '))}` : 'no conflict'}`;
    case 'integration:done':
      return `${text(e.data.delegationId)} ${e.data.alreadyOnTarget ? 'was already on the target' : `integrated by ${e.data.strategy}`}: ${short(e.data.targetBefore)} → ${short(e.data.targetAfter)}`;
    case 'integration:verifying':
      return `${text(e.data.delegationId)} verifying merged tree ${short(e.data.tree)} (target ${short(e.data.targetHead)} + ${text((e.data.batch ?? [e.data.taskId]).join(', '))}): ${counted(e.data.toRun, 'command')} to run${e.data.reused ? `, ${e.data.reused} passed on it before` : ''}`;
    case 'integration:verified':
      return e.data.approvedAt
        ? `${text(e.data.delegationId)} integrates although its merged tree ${short(e.data.tree)} failed (approved at ${text(e.data.approvedAt)})`
        : `${e.data.batch ? `batch ${text(e.data.batch.join(', '))}:` : text(e.data.delegationId)} merged tree ${short(e.data.tree)} passed (${e.data.ran} run, ${e.data.reused} reused)`;
    case 'integration:failed':
      return `${text(e.data.delegationId)} merged tree ${short(e.data.tree)} failed: \`${text(e.data.command.join(' '))}\` ${e.data.timedOut ? 'timed out' : `exited ${String(e.data.exitCode)}`}; ${text(e.data.gateId)} opened, the target did not move`;
    case 'integration:pushed':
      return `${text(e.data.delegationId)} pushed to ${text(e.data.remote)} as ${text(e.data.branch)} (${short(e.data.sourceHead)}); ${text(e.data.targetBranch)} did not move`;
    case 'integration:pull-request':
      return e.data.opened
        ? `${text(e.data.delegationId)} pull request opened: ${text(e.data.url ?? e.data.branch)}`
        : `${text(e.data.delegationId)} pull request suggested (${e.data.gh === 'absent' ? 'gh is not installed' : e.data.gh === 'unauthenticated' ? 'gh is not logged in' : `gh failed: ${text(e.data.detail ?? '')}`}): ${text(e.data.title)} — ${oneLine(e.data.command, maxField * 4)}`;
    case 'integration:push-failed':
      return `${text(e.data.delegationId)} push of ${text(e.data.branch)} to ${text(e.data.remote)} refused: ${text(e.data.refusal)}; ${text(e.data.gateId)} opened`;
    case 'integration:batch-started':
      return `integration batch ${text(e.data.taskIds.join(', '))} merged onto ${short(e.data.targetHead)}, verified together`;
    case 'integration:batch-split':
      return `batch ${text(e.data.failed.join(', '))}: merged tree ${short(e.data.tree)} failed \`${text(e.data.command.join(' '))}\` ${e.data.timedOut ? 'timed out' : `exited ${String(e.data.exitCode)}`}; split: ${text(e.data.next.join(', '))} next`;
    case 'config:changed': {
      const what = e.data.invalid
        ? `it no longer parses (${text(e.data.invalid)})`
        : [
            // A change is two command lines and env keys: cut at four fields' length, not one.
            ...e.data.changes.map((change) => oneLine(change, maxField * 4)),
            ...(e.data.settings.length ? [`settings ${e.data.settings.join(', ')}`] : []),
          ].join('; ') || 'no setting the run froze differs';
      return `.baton/config.json changed (noticed by the ${e.data.noticedBy}): ${what}; the run keeps its frozen settings`;
    }
    case 'attempt:parked':
      return e.data.cause === 'usage-limit'
        ? `${text(e.data.delegationId)} parked: ${text(e.data.worker)} hit its usage limit${e.data.said ? ` (${text(e.data.said)})` : ''}; ${text(e.data.taskId)} resumes at ${new Date(e.data.until).toISOString()}`
        : `${text(e.data.delegationId)} parked: its silent stream was stopped; ${text(e.data.taskId)} resumes in its session`;
    case 'follow-up:sent':
      return `${text(e.data.by)} sent ${text(e.data.taskId)} a message${
        e.data.action === 'interrupt'
          ? `; its running attempt ${text(e.data.interruptedDelegationId)} ends and the next continues with it`
          : e.data.action === 'reopen'
            ? '; it runs again as a follow-up'
            : e.data.action === 'send-back'
              ? e.data.sentBack?.gateKind === 'integration_failed'
                ? `: ${text(e.data.sentBack.delegationId)}, whose work failed merged, goes back to its agent; the next attempt starts from its work`
                : `: changes requested of ${text(e.data.sentBack?.delegationId)} at its review; the next attempt starts from its work`
              : '; its next attempt carries it'
      }: "${text(e.data.message)}"`;
    case 'attempt:follow-up':
      return `${text(e.data.delegationId)} is a follow-up with ${e.data.by.length === 1 ? `${text(e.data.by[0])}'s message` : `messages from ${e.data.by.map((b) => text(b)).join(', ')}`}${e.data.sessionId ? `, in session ${text(e.data.sessionId)}` : ''}`;
    case 'review:sent': {
      const places = e.data.comments.map((c) => `${text(c.path)}:${c.line} "${oneLine(c.text, 40)}"`);
      const shown = places.length > 3 ? [...places.slice(0, 3), `${places.length - 3} more`] : places;
      return `${text(e.data.by)} sent ${text(e.data.taskId)} a review${e.data.reviewed ? ` of ${text(e.data.reviewed)}` : ''}: ${counted(e.data.comments.length, 'comment')} (${shown.join(', ')})${
        e.data.action === 'interrupt'
          ? '; its running attempt ends and the next continues with it'
          : e.data.action === 'reopen'
            ? '; it runs again as a follow-up'
            : e.data.action === 'send-back'
              ? '; changes requested: the next attempt starts from the reviewed work'
              : '; its next attempt carries it'
      }`;
    }
    case 'attempt:resumed':
      return `${text(e.data.delegationId)} resumes parked ${text(e.data.parkedDelegationId)}${e.data.sessionId ? ` in session ${text(e.data.sessionId)}` : ''}`;
    case 'attempt:silent':
      return `${text(e.data.delegationId)} silent for ${e.data.silentSeconds} s${e.data.action === 'stop' ? '; stopped to resume in its session' : '; waiting'}`;
    case 'config:frozen':
      return e.data.why === 'legacy'
        ? `worker definitions frozen from .baton/config.json as it is now (the run started before Baton froze them): ${short(e.data.digest.replace('sha256:', ''))}`
        : `worker definitions adopted from .baton/config.json at ${text(e.data.gateId)}: ${short((e.data.previousDigest ?? '').replace('sha256:', ''))} → ${short(e.data.digest.replace('sha256:', ''))}`;
  }
}

/**
 * One line: control characters (newlines, escapes a worker may have printed) become spaces; at most `max` characters.
 */
export function oneLine(value: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
