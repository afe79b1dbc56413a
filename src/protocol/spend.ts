/**
 * How Baton writes what agents spent, shared by the extension's views and the dashboard
 * webview (and worded as `baton status` words it): both surfaces format the same figures —
 * the run-state cache's usage rows, added up once (viewRows.ts `spendOf`) — with this
 * function, so the Runs and Workers views and the dashboard never disagree on a figure.
 * Pure: no vscode, no DOM.
 */

/** Tokens (input and output together) and, when known, US dollars. */
export interface SpendFigures {
  tokens: number;
  /** Absent while the cost is unknown (a CLI that reports none, a model without a price). */
  costUsd?: number;
}

/** Dollars as agents are billed: four decimals below a dollar, cents above. */
export function formatUsd(amount: number): string {
  return amount < 1 ? `$${amount.toFixed(4)}` : `$${amount.toFixed(2)}`;
}

/** `4,800 tokens, $0.0400`; `1 token`; without a known cost, the tokens alone. */
export function formatSpend(spend: SpendFigures): string {
  const tokens = `${Math.round(spend.tokens).toLocaleString('en-US')} token${spend.tokens === 1 ? '' : 's'}`;
  return spend.costUsd !== undefined ? `${tokens}, ${formatUsd(spend.costUsd)}` : tokens;
}
