import { RESULT_STATUSES, type ResultStatus } from '../types';
import { RESULT_CONTRACTS } from './parseResult';

/** The result contract as a worker is told it (docs/result-contract.md): the block to end its artifact with. */
export interface ResultContractBrief {
  /** The fence's info string. */
  block: 'baton-result';
  contract: (typeof RESULT_CONTRACTS)['baton-result'];
  statuses: ResultStatus[];
  /** A block filled in with the attempt's task and agent: the worker changes status, summary and artifacts. */
  template: string;
  rules: string[];
}

export function resultContractFor(taskId: string, agent: string): ResultContractBrief {
  const template = [
    '```baton-result',
    `contract: ${RESULT_CONTRACTS['baton-result']}`,
    `task: ${taskId}`,
    `agent: ${agent}`,
    'status: PASS',
    'summary: One line on what you did.',
    'artifacts:',
    '  - path/of/a/file/you/created/or/changed',
    '```',
  ].join('\n');
  return {
    block: 'baton-result',
    contract: RESULT_CONTRACTS['baton-result'],
    statuses: [...RESULT_STATUSES],
    template,
    rules: [
      'The artifact is a short markdown report with exactly one baton-result block.',
      'status is PASS (done), FAIL (you tried and it does not work) or BLOCKED (you need a person to decide or help).',
      'task and agent must be exactly the ones given.',
      'artifacts lists workspace-relative paths (/ separators, no .. or leading /) of files that exist.',
    ],
  };
}
