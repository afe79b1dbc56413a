import * as vscode from 'vscode';
import { UserFacingError } from '../session';
import { folderCommand } from './context';

/** Create Example Plan: writes a small example plan beside the person's files, never over one, and opens it. */
export const createExamplePlan = folderCommand(async (ctx) => {
  const uri = await freePlanUri(ctx.session.folder.uri);
  await vscode.workspace.fs.writeFile(uri, Buffer.from(EXAMPLE_PLAN));
  await vscode.window.showTextDocument(uri);
});

/**
 * Where Create Example Plan writes: baton-plan.md, else baton-plan-2.md, -3, … — never over a
 * file that is there (the person's own plan, or the example they already edited).
 */
async function freePlanUri(folder: vscode.Uri): Promise<vscode.Uri> {
  for (let n = 1; n < 1000; n++) {
    const uri = vscode.Uri.joinPath(folder, n === 1 ? 'baton-plan.md' : `baton-plan-${n}.md`);
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      return uri; // nothing there
    }
  }
  throw new UserFacingError('There are 999 example plans in this folder already; rename one and try again.');
}

const EXAMPLE_PLAN = `# Example plan

Each task is a \`baton-task\` block; the text after it is the task's instructions.

\`\`\`baton-task
id: T1
title: Say hello
\`\`\`
Write hello.txt with a greeting.

\`\`\`baton-task
id: T2
title: Check it
depends: [T1]
\`\`\`
Read hello.txt and report whether it is friendly.
`;
