import type { BatonCommand } from './context';
import { cancelRun } from './cancelRun';
import { createExamplePlan } from './createExamplePlan';
import { addTask } from './addTask';
import { answerQuestion } from './answerQuestion';
import { approveGate, rejectGate } from './decideGate';
import { doctor } from './doctor';
import { ingestArtifact } from './ingestArtifact';
import { openArtifact, openLog } from './openFiles';
import { openDashboard } from './openDashboard';
import { openDocs } from './openDocs';
import { openWorktree, openWorktreeInTerminal } from './openWorktree';
import { recheckIsolation } from './recheckIsolation';
import { reconcileRun } from './reconcileRun';
import { resolveConflict } from './resolveConflict';
import { refresh } from './refresh';
import { removeRun, showRemovedRuns } from './removeRuns';
import { replanRun } from './replanRun';
import {
  addReviewComment,
  approveReview,
  deleteReviewComment,
  dropFromIntegration,
  requestChanges,
  sendReview,
} from './review';
import { resumeRun } from './resumeRun';
import { runTask } from './runTask';
import { sendMessage } from './sendMessage';
import { showChanges, showOutput } from './showAttempt';
import { showEvents } from './showEvents';
import { showLog } from './showLog';
import { startNewRun, startRun } from './startRun';
import { stopDelegation, stopRun, stopRunImmediately } from './stopRun';

/**
 * Every command Baton contributes, by its id in package.json (`contributes.commands`, in that
 * order), and nothing else: registration walks this table (register.ts), and
 * test/unit/extension/commands/table.test.ts holds the two lists to each other.
 */
export const COMMANDS = {
  'baton.startRun': startRun,
  'baton.startNewRun': startNewRun,
  'baton.runTask': runTask,
  'baton.approveGate': approveGate,
  'baton.rejectGate': rejectGate,
  'baton.recheckIsolation': recheckIsolation,
  'baton.answerQuestion': answerQuestion,
  'baton.resolveConflict': resolveConflict,
  'baton.stopRun': stopRun,
  'baton.stopRunImmediately': stopRunImmediately,
  'baton.cancelRun': cancelRun,
  'baton.stopDelegation': stopDelegation,
  'baton.sendMessage': sendMessage,
  'baton.sendReview': sendReview,
  'baton.addReviewComment': addReviewComment,
  'baton.deleteReviewComment': deleteReviewComment,
  'baton.requestChanges': requestChanges,
  'baton.approveReview': approveReview,
  'baton.dropFromIntegration': dropFromIntegration,
  'baton.ingestArtifact': ingestArtifact,
  'baton.resumeRun': resumeRun,
  'baton.reconcileRun': reconcileRun,
  'baton.replanRun': replanRun,
  'baton.addTask': addTask,
  'baton.openArtifact': openArtifact,
  'baton.openLog': openLog,
  'baton.showChanges': showChanges,
  'baton.showOutput': showOutput,
  'baton.openWorktree': openWorktree,
  'baton.openWorktreeInTerminal': openWorktreeInTerminal,
  'baton.showEvents': showEvents,
  'baton.showLog': showLog,
  'baton.refresh': refresh,
  'baton.removeRun': removeRun,
  'baton.showRemovedRuns': showRemovedRuns,
  'baton.createExamplePlan': createExamplePlan,
  'baton.openDocs': openDocs,
  'baton.doctor': doctor,
  'baton.openDashboard': openDashboard,
} as const satisfies Record<`baton.${string}`, BatonCommand>;

export type CommandId = keyof typeof COMMANDS;
