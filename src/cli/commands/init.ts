import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BATON_DIR, configPathOf, DEFAULT_CONFIG, excludeBatonFromRepository } from '../../engine/index';
import { printJson, type CommandContext } from '../context';

const GITIGNORE =
  '# Baton state is local to this machine; config.json is meant to be shared.\n*\n!.gitignore\n!config.json\n';

/** Creates .baton/ with a default config. Never overwrites an existing config. */
export function init(ctx: CommandContext): void {
  const dir = join(ctx.workspace, BATON_DIR);
  const configPath = configPathOf(ctx.workspace);
  const created: string[] = [];
  // Before the first write: Baton's folder never shows as untracked in the repository.
  const repository = excludeBatonFromRepository(ctx.workspace);
  mkdirSync(dir, { recursive: true });
  if (!existsSync(configPath)) {
    writeFileSync(configPath, `${JSON.stringify(DEFAULT_CONFIG, null, 2)}\n`, { flag: 'wx' });
    created.push(configPath);
  }
  const gitignore = join(dir, '.gitignore');
  if (!existsSync(gitignore)) {
    writeFileSync(gitignore, GITIGNORE, { flag: 'wx' });
    created.push(gitignore);
  }
  if (ctx.output.json) return printJson(ctx, { workspace: ctx.workspace, created });
  if (created.length === 0) ctx.output.out(`Baton is already set up in ${ctx.workspace} (config: ${configPath}).`);
  else ctx.output.out(`Set up Baton in ${ctx.workspace}:\n${created.map((c) => `  created ${c}`).join('\n')}`);
  if (repository)
    ctx.output.out(
      `Baton's state under ${BATON_DIR}/ is in the git repository's info/exclude; commit ${BATON_DIR}/config.json to share the config.`,
    );
}
