import { execFile } from 'node:child_process';

/** A desktop notification: title, body, and whether it is urgent (a run that failed or blocked). */
export interface DesktopNotice {
  title: string;
  body: string;
  urgent: boolean;
}

/** What became of one: shown, `notify-send` absent (nothing else happens), or it failed (its message). */
export type DesktopOutcome = { kind: 'sent' } | { kind: 'absent' } | { kind: 'failed'; detail: string };

/**
 * Sends a desktop notification through `notify-send` (libnotify: most Linux desktops), found on PATH as the
 * extension host has it; never through a shell, so a title cannot run anything. Where it is not installed (macOS,
 * Windows, a server) the outcome says so and nothing else happens (docs/extension.md, "Attention"). No vscode here:
 * unit-tested with a stand-in on PATH.
 */
export function sendDesktopNotification(notice: DesktopNotice): Promise<DesktopOutcome> {
  const args = ['--app-name=Baton', `--urgency=${notice.urgent ? 'critical' : 'normal'}`, notice.title, notice.body];
  return new Promise((resolve) => {
    execFile('notify-send', args, { timeout: 5000 }, (err) => {
      if (!err) resolve({ kind: 'sent' });
      else if ((err as NodeJS.ErrnoException).code === 'ENOENT') resolve({ kind: 'absent' });
      else resolve({ kind: 'failed', detail: err.message });
    });
  });
}
