#!/usr/bin/env node
// A CPU hog: busy processes beside a command, to prove that the tests hold on a loaded
// machine (test/README.md, "Under load").
//
//   node scripts/cpuHog.mjs -- npm test            # two busy processes while `npm test` runs
//   node scripts/cpuHog.mjs --procs 4 -- npm test  # four
//   node scripts/cpuHog.mjs                        # two busy processes until Ctrl-C
//
// Each hog is a separate Node process spinning on one core, at normal priority, so it competes
// with the tests as other work on a shared machine would. The command's exit code is this
// script's; the hogs end with it (and with Ctrl-C). The 1-minute load average is printed every
// minute and at the end, so a log shows the load the run had.
import { spawn } from 'node:child_process';
import { constants, loadavg } from 'node:os';

const argv = process.argv.slice(2);
const dashDash = argv.indexOf('--');
const options = dashDash === -1 ? argv : argv.slice(0, dashDash);
const command = dashDash === -1 ? [] : argv.slice(dashDash + 1);
const procsAt = options.indexOf('--procs');
const procs = procsAt === -1 ? 2 : Number(options[procsAt + 1]);
if (!Number.isInteger(procs) || procs < 1) {
  process.stderr.write('cpuHog: --procs takes a whole number of at least 1\n');
  process.exit(2);
}

const hogs = Array.from({ length: procs }, () =>
  // Busy, and gone soon after this script is, however it ended (a SIGKILL included): a hog that finds itself
  // re-parented stops, so no hog outlives the run it was loading.
  spawn(
    process.execPath,
    ['-e', `for (;;) { for (let i = 0; i < 1e8; i++); if (process.ppid !== ${process.pid}) process.exit(0); }`],
    { stdio: 'ignore', detached: false },
  ),
);
const started = Date.now();
const load = () => loadavg()[0].toFixed(1);
process.stderr.write(`cpuHog: ${procs} busy processes (pids ${hogs.map((h) => h.pid).join(', ')})\n`);
const ticker = setInterval(() => {
  const minutes = Math.round((Date.now() - started) / 60_000);
  process.stderr.write(`cpuHog: ${minutes} min, 1-minute load average ${load()}\n`);
}, 60_000);

/** Ends the hogs; every exit path goes through here. */
function stopHogs() {
  clearInterval(ticker);
  for (const hog of hogs) hog.kill('SIGKILL');
  process.stderr.write(
    `cpuHog: stopped after ${((Date.now() - started) / 60_000).toFixed(1)} min (1-minute load ${load()})\n`,
  );
}

if (command.length === 0) {
  process.on('SIGINT', () => {
    stopHogs();
    process.exit(130);
  });
} else {
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  // The command gets the terminal's Ctrl-C itself; the hogs end when it does.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      stopHogs();
      child.kill(signal);
    });
  }
  child.on('error', (err) => {
    stopHogs();
    process.stderr.write(`cpuHog: ${command[0]}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    stopHogs();
    process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
  });
}
