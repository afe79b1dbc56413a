import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import { activateBaton, waitFor, workspacePath } from './support/editor';

/** How many gates the status bar says wait ("Baton: 2 gates waiting, …", or "Baton: 1 running, 2 waiting"). */
function gatesInStatusBar(text: string): number {
  const match = /(\d+) gates? waiting/.exec(text) ?? /running, (\d+) waiting/.exec(text);
  return match ? Number(match[1]) : 0;
}

// docs/extension.md, "Attention": what waits on a person is counted on the Baton views' badge and in the status
// bar, and a run that a decision ended says which decision.
describe('Attention', function () {
  this.timeout(120_000);
  let api: BatonApi;
  const shown: Array<{ level: string; message: string }> = [];
  const window = vscode.window as unknown as Record<string, unknown>;
  const originals = ['showInformationMessage', 'showWarningMessage'].map((name) => [name, window[name]] as const);
  const path = process.env.PATH;

  before(async () => {
    api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
    for (const [name] of originals)
      window[name] = (message: string) => {
        shown.push({ level: name, message });
        return Promise.resolve(undefined);
      };
  });

  after(async () => {
    for (const [name, original] of originals) window[name] = original;
    process.env.PATH = path;
    await vscode.workspace
      .getConfiguration('baton')
      .update('notifications.os', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('the badge and the status bar count a gate that opens and let it go when it is decided; the decision that ends the run is told', async () => {
    // A desktop notification goes through notify-send: a stand-in on PATH writes what it was given.
    const bin = workspacePath('scratch', 'attention-bin');
    const sent = join(bin, 'sent.txt');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s|' "$@" >> '${sent}'\nprintf '\\n' >> '${sent}'\n`);
    chmodSync(join(bin, 'notify-send'), 0o755);
    process.env.PATH = `${bin}${delimiter}${path}`;
    await vscode.workspace
      .getConfiguration('baton')
      .update('notifications.os', true, vscode.ConfigurationTarget.Workspace);

    const plan = workspacePath('scratch', 'attention.plan.md');
    mkdirSync(dirname(plan), { recursive: true });
    writeFileSync(
      plan,
      '# Attention\n\n```baton-task\nid: A1\ntitle: Drop the old table\nagent: coder\nrisk: [database]\n```\nDrop it.\n',
    );
    // Counted from a steady state: an earlier suite's run may still be ending in this window (its stop, its last gate).
    let before = await waitFor('the attention state', () => api.attention());
    for (let steady = 0, tries = 0; steady < 3 && tries < 40; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = await waitFor('the attention state', () => api.attention());
      steady = JSON.stringify(now) === JSON.stringify(before) ? steady + 1 : 0;
      before = now;
    }
    const engine = await api.session!.engine();
    // Started as `baton start` or another window would: its risk gate opens at once; nothing here drives it.
    const run = await engine.startRun('scratch/attention.plan.md');
    const gate = (await engine.listGates({ runId: run.id }))[0]!;
    assert.equal(gate.kind, 'risk_approval');

    const waiting = await waitFor('the gate on the badge', () => {
      const now = api.attention();
      return now && now.waiting === before.waiting + 1 ? now : undefined;
    });
    assert.equal(waiting.badge?.value, before.waiting + 1, 'the Baton views’ badge counts it');
    assert.ok(
      waiting.badge?.tooltip.includes(`${gate.id} risk approval of A1 “Drop the old table” waits for a decision`),
      waiting.badge?.tooltip,
    );
    assert.equal(gatesInStatusBar(waiting.statusBar), gatesInStatusBar(before.statusBar) + 1, waiting.statusBar);

    await vscode.commands.executeCommand('baton.rejectGate', {
      kind: 'gate',
      id: `gate:${gate.id}`,
      runId: run.id,
      gateId: gate.id,
      note: 'not now',
    });
    const ends = (): Array<{ level: string; message: string }> =>
      shown.filter((m) => m.message.startsWith(`Baton run ${run.id} `));
    const told = await waitFor('the end of the run to be told', () => ends()[0]);
    assert.equal(told.level, 'showWarningMessage');
    assert.match(
      told.message,
      new RegExp(
        `^Baton run ${run.id} \\(attention\\.plan\\.md\\) blocked: ${gate.id} \\(risk approval of A1\\) was rejected by .+ \\(“not now”\\); 0 of 1 task completed, 1 cancelled\\.$`,
      ),
    );
    const decided = await waitFor('the badge to let the gate go', () => {
      const now = api.attention();
      return now && now.waiting === before.waiting ? now : undefined;
    });
    assert.equal(decided.badge?.value, before.waiting || undefined);
    assert.equal(gatesInStatusBar(decided.statusBar), gatesInStatusBar(before.statusBar), decided.statusBar);
    await api.session!.runState!.refreshNow();
    assert.equal(ends().length, 1, 'told once');

    // The desktop notification, only while the window is not focused (a headless test window may be either).
    if (vscode.window.state.focused) assert.equal(existsSync(sent), false, 'a focused window has its own');
    else {
      const lines = await waitFor('notify-send to be called for the gate and the end', () => {
        const got = existsSync(sent) ? readFileSync(sent, 'utf8').trim().split('\n') : [];
        return got.length >= 2 ? got : undefined;
      });
      assert.ok(
        lines.some((l) => l.includes(`Baton: ${gate.id} waits for a decision`)),
        lines.join('\n'),
      );
      assert.ok(
        lines.some((l) => l.includes(`${run.id} blocked: ${gate.id}`)),
        lines.join('\n'),
      );
    }
  });
});
