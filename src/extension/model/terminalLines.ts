import { systemClock, type Clock, type Disposable } from '../../engine/index';

export interface TerminalLinesOptions {
  /** How long an unfinished last line is held back before it is shown on a line of its own. */
  holdMs?: number;
  /** The hold's clock (the engine's `Clock`; tests move a fake one). */
  clock?: Clock;
}

/**
 * Text for a terminal Baton writes into (Show Output's pseudoterminal), handed over in whole
 * lines, each ending with `\r\n`, so the terminal's cursor always stands at the start of an
 * empty line between writes.
 *
 * Why: the terminal (xterm.js) re-wraps every line when its panel is resized, except the
 * lines the cursor is on — those it leaves to "the program", and a narrower panel cuts their
 * ends off for good (xterm.js issues 2121, 4824 and 5213; `reflowCursorLine` is off in VS
 * Code). A log read as it grows ends in the middle of a line more often than not; written
 * as it came, that line lost its end at the next resize (issue #24, item 8). So the last,
 * unfinished line is held back until its newline comes — or, for text that waits without
 * one (a prompt, a progress counter), until `holdMs` passed without it: then it is shown on
 * a line of its own, and the rest of it, when it comes, starts the next line. Every
 * character is kept either way; only such a line may be shown in two parts.
 */
export class TerminalLines implements Disposable {
  private held = '';
  private cancelHold: (() => void) | undefined;

  constructor(
    private readonly write: (text: string) => void,
    private readonly options: TerminalLinesOptions = {},
  ) {}

  /** Text as it came (newlines `\n` or `\r\n`): its whole lines are written, the unfinished rest held. */
  push(text: string): void {
    if (!text) return;
    const all = this.held + text;
    const end = all.lastIndexOf('\n');
    if (end < 0) {
      this.held = all;
      this.holdOn();
      return;
    }
    this.held = all.slice(end + 1);
    this.write(terminalText(all.slice(0, end + 1)));
    if (this.held) this.holdOn();
    else this.stopHolding();
  }

  /** Writes what is held (the writer ended, or it waited long enough) as a line of its own. */
  flush(): void {
    this.stopHolding();
    if (!this.held) return;
    const line = this.held;
    this.held = '';
    this.write(terminalText(`${line}\n`));
  }

  dispose(): void {
    this.stopHolding();
  }

  private holdOn(): void {
    if (this.cancelHold) return;
    this.cancelHold = (this.options.clock ?? systemClock).setTimer(this.options.holdMs ?? 1000, () => {
      this.cancelHold = undefined;
      this.flush();
    });
  }

  private stopHolding(): void {
    this.cancelHold?.();
    this.cancelHold = undefined;
  }
}

/** A terminal takes `\r\n` to start a new line; a log's lines end with `\n` (or already `\r\n`). */
function terminalText(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}
