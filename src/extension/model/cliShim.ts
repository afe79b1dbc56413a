/**
 * The `baton` command the extension puts on the PATH of VS Code's integrated terminals (issue 24, item 10;
 * docs/cli.md, "Getting `baton`"): a script that runs the CLI this extension ships with the editor's own Node (in the
 * desktop editor, its Electron binary run as Node), so a terminal of a workspace with Baton has the same `baton` as
 * the editor — same version, same store format — with nothing installed.
 */
export interface CliShim {
  /** The file's name in its folder. */
  name: string;
  text: string;
}

/** The script for this platform: `baton` (POSIX sh) or `baton.cmd` (Windows). */
export function cliShim(nodePath: string, cliPath: string, platform: NodeJS.Platform): CliShim {
  if (platform === 'win32')
    return {
      name: 'baton.cmd',
      text: `@echo off\r\nset ELECTRON_RUN_AS_NODE=1\r\n"${nodePath}" "${cliPath}" %*\r\n`,
    };
  return {
    name: 'baton',
    text: [
      '#!/bin/sh',
      "# baton, as the Baton extension put it on the PATH of VS Code's terminals (docs/cli.md).",
      `ELECTRON_RUN_AS_NODE=1 exec ${shellQuote(nodePath)} ${shellQuote(cliPath)} "$@"`,
      '',
    ].join('\n'),
  };
}

/** One argument for sh, whatever it holds: in single quotes, each single quote closed, escaped and reopened. */
function shellQuote(text: string): string {
  return `'${text.split("'").join("'\\''")}'`;
}
