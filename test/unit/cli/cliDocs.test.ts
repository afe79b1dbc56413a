import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { buildProgram, EXIT_CODES } from '../../../src/cli/main';
import { configJsonSchema, configSchema, DEFAULT_CONFIG, formatIssue, parseConfig } from '../../../src/engine/index';

/**
 * docs/cli.md and docs/config.md against the code, in process (no CLI is spawned): the
 * --help listings, the exit-code table, the environment variables, and the settings,
 * worker fields and examples of the config page. Fails when the docs drift.
 */

const ROOT = resolve(__dirname, '../../..');
const CLI_DOC = 'docs/cli.md';
const CONFIG_DOC = 'docs/config.md';
const readDoc = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

interface Fence {
  info: string;
  lines: string[];
  /** 1-based line of the opening fence in the document. */
  line: number;
}

/** Fenced code blocks (``` or longer, possibly indented, as in a list item), with their content unindented. */
function fences(markdown: string): Fence[] {
  const found: Fence[] = [];
  let open: { fence: string; indent: number; info: string; line: number; lines: string[] } | undefined;
  markdown.split('\n').forEach((text, index) => {
    const match = /^( *)(`{3,})(.*)$/.exec(text);
    if (!open) {
      if (match)
        open = { fence: match[2]!, indent: match[1]!.length, info: match[3]!.trim(), line: index + 1, lines: [] };
    } else if (match && match[2] === open.fence && match[3]!.trim() === '') {
      found.push({ info: open.info, lines: open.lines, line: open.line });
      open = undefined;
    } else {
      open.lines.push(text.slice(Math.min(open.indent, text.length - text.trimStart().length)));
    }
  });
  assert.equal(open, undefined, `an unclosed code fence at line ${open?.line}`);
  return found;
}

/** The text under a heading, up to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  assert.ok(start >= 0, `heading "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const end = lines.findIndex((l, i) => i > start && new RegExp(`^#{1,${level}} `).test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The cells of every table body row (not the header row or the separator). */
function tableRows(markdown: string): string[][] {
  const separator = /^\s*\|(\s*:?-{3,}:?\s*\|)+\s*$/;
  const lines = markdown.split('\n');
  return lines
    .filter((line, i) => /^\s*\|/.test(line) && !separator.test(line) && !separator.test(lines[i + 1] ?? ''))
    .map(splitRow);
}

/** Splits a table row at unescaped pipes (`\|` stays in the cell). */
function splitRow(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
  return cells;
}

/** `code spans` of a cell. */
const codeSpans = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The program exactly as `baton` builds it, with help at the width and colours of piped output. */
function program(): Command {
  const root = buildProgram(() => undefined);
  const configure = (command: Command): void => {
    command.configureOutput({
      getOutHelpWidth: () => 80,
      getErrHelpWidth: () => 80,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    });
    command.commands.forEach(configure);
  };
  configure(root);
  return root;
}

/** `baton --help` and every `baton <command> --help`, keyed by '' and the command name. */
function realHelp(): Map<string, string> {
  const root = program();
  const help = new Map<string, string>([['', root.helpInformation()]]);
  for (const command of root.commands) {
    help.set(command.name(), command.helpInformation());
    // A command with its own commands (`baton store export`): each of those too.
    for (const sub of command.commands) help.set(`${command.name()} ${sub.name()}`, sub.helpInformation());
  }
  return help;
}

/** The help listings in docs/cli.md: fenced blocks whose first line is `$ baton [command] --help`. */
function documentedHelp(markdown: string): Array<{ command: string; text: string; line: number }> {
  return fences(markdown)
    .map((f) => ({ f, match: /^\$ baton (?:(\S+(?: \S+)?) )?--help$/.exec(f.lines[0] ?? '') }))
    .filter(({ match }) => match)
    .map(({ f, match }) => ({ command: match![1] ?? '', text: f.lines.slice(1).join('\n'), line: f.line }));
}

/** Every source file of the CLI and the engine. */
function sourceFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    );
  return [...walk(join(ROOT, 'src/cli')), ...walk(join(ROOT, 'src/engine'))];
}

describe('docs/cli.md matches the CLI', () => {
  const doc = readDoc(CLI_DOC);

  describe('--help listings', () => {
    const real = realHelp();
    const documented = documentedHelp(doc);

    it('shows `baton --help` exactly as the CLI prints it', () => {
      const top = documented.filter((d) => d.command === '');
      assert.equal(top.length, 1, 'one `$ baton --help` block');
      assert.equal(top[0]!.text, real.get('')!.trimEnd(), `${CLI_DOC}:${top[0]!.line}: baton --help differs`);
    });

    it("shows every command's --help exactly as the CLI prints it, once", () => {
      for (const [command, text] of real) {
        if (command === '' || command === 'help' || command.endsWith(' help')) continue;
        const blocks = documented.filter((d) => d.command === command);
        assert.equal(blocks.length, 1, `one \`$ baton ${command} --help\` block in ${CLI_DOC}`);
        assert.equal(blocks[0]!.text, text.trimEnd(), `${CLI_DOC}:${blocks[0]!.line}: baton ${command} --help differs`);
      }
    });

    it('shows no help for a command the CLI does not have', () => {
      for (const block of documented)
        assert.ok(real.has(block.command), `${CLI_DOC}:${block.line}: there is no command "${block.command}"`);
    });

    it('has a section for every command', () => {
      const headings = doc.split('\n').filter((l) => l.startsWith('### '));
      for (const command of program().commands) {
        if (command.name() === 'help') continue;
        assert.ok(
          headings.some((h) => h.includes(`\`baton ${command.name()}\``)),
          `a "### \`baton ${command.name()}\`" heading`,
        );
      }
    });

    it("names only real options in each command's option table", () => {
      const root = program();
      const globals = root.options.map((o) => o.long!).concat('--help');
      const sections = doc.split(/^(?=### )/m).filter((s) => s.startsWith('### `baton '));
      for (const text of sections) {
        const heading = text.split('\n')[0]!;
        const names = [...heading.matchAll(/`baton ([a-z]+)`/g)].map((m) => m[1]!);
        const commands = names.map((name) => root.commands.find((c) => c.name() === name));
        assert.ok(
          commands.every((c) => c),
          `${heading}: every command it names exists`,
        );
        const known = new Set([...globals, ...commands.flatMap((c) => c!.options.map((o) => o.long!))]);
        for (const row of tableRows(text)) {
          for (const flag of (row[0] ?? '').match(/--[a-z][a-z-]*/g) ?? [])
            assert.ok(known.has(flag), `${heading}: ${flag} is not an option of ${names.join(' / ')}`);
        }
      }
    });
  });

  describe('exit codes', () => {
    const rows = tableRows(section(doc, '## Exit codes')).map((cells) => ({
      code: Number(cells[0]),
      kind: codeSpans(cells[1] ?? '')[0],
      meaning: cells[2] ?? '',
    }));

    it('lists each code 0–8 once, in order', () => {
      assert.deepEqual(
        rows.map((r) => r.code),
        [0, 1, 2, 3, 4, 5, 6, 7, 8],
      );
    });

    it('gives each error kind the code the CLI exits with (EXIT_CODES)', () => {
      const documented = Object.fromEntries(rows.filter((r) => r.kind).map((r) => [r.kind, r.code]));
      assert.deepEqual(documented, EXIT_CODES);
      assert.equal(rows[0]!.kind, undefined, 'code 0 has no error kind');
    });

    it('gives each code a meaning', () => {
      for (const row of rows) assert.ok(row.meaning.length > 0, `exit ${row.code} has a meaning`);
    });
  });

  describe('environment variables', () => {
    // Two tables: the variables `baton` reads, then (after "Set by Baton …") the ones it sets for what it starts.
    const [readTable = '', setTable = ''] = section(doc, '## Environment variables').split(/\n(?=Set by Baton)/);
    const namesIn = (text: string): Set<string> =>
      new Set(tableRows(text).flatMap((row) => codeSpans(row[0] ?? '').map((span) => span.split('=')[0]!)));
    const read = namesIn(readTable);
    const set = namesIn(setTable);
    const sources = sourceFiles().map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, 'utf8') }));

    it('documents every variable the CLI and the engine read, and no other', () => {
      const inCode = new Set<string>();
      for (const { text } of sources)
        for (const m of text.matchAll(/process\.env(?:\.([A-Z_][A-Z0-9_]*)|\[\s*['"]([A-Z_][A-Z0-9_]*)['"]\s*\])/g))
          inCode.add(m[1] ?? m[2]!);
      assert.ok(inCode.size > 0 && set.size > 0, 'the scan finds process.env reads; the doc has both tables');
      assert.deepEqual([...read].sort(), [...inCode].sort());
    });

    it('mentions every BATON_* variable of the source, and none that the source does not have', () => {
      const constants = new Set<string>();
      const tokens = new Map<string, string>();
      for (const { file, text } of sources) {
        for (const m of text.matchAll(/\b(?:const|let|var)\s+(BATON_[A-Z0-9_]+)\b/g)) constants.add(m[1]!);
        for (const m of text.matchAll(/\bBATON_[A-Z][A-Z0-9_]*\b/g)) if (!tokens.has(m[0])) tokens.set(m[0], file);
      }
      const variables = [...tokens.keys()].filter((t) => !constants.has(t));
      const documented = new Set([...read, ...set]);
      for (const variable of variables)
        assert.ok(documented.has(variable), `${variable} (${tokens.get(variable)}) is not in ${CLI_DOC}`);
      for (const name of documented)
        if (name.startsWith('BATON_')) assert.ok(variables.includes(name), `${name} is documented but not in src/`);
    });
  });
});

describe('docs/config.md matches the config schema', () => {
  const doc = readDoc(CONFIG_DOC);
  const schema = configJsonSchema() as {
    properties: Record<string, { minimum?: number; maximum?: number }> & {
      workers: { additionalProperties: { oneOf: Array<{ properties: Record<string, { const?: string }> }> } };
    };
  };

  it('has a row for every setting, with its default and range', () => {
    const rows = new Map(
      tableRows(section(doc, '## Settings')).map((cells) => [codeSpans(cells[0] ?? '')[0]!, cells] as const),
    );
    assert.deepEqual([...rows.keys()].sort(), Object.keys(configSchema.shape).sort());
    for (const [key, value] of Object.entries(DEFAULT_CONFIG)) {
      const cells = rows.get(key)!;
      assert.deepEqual(JSON.parse(codeSpans(cells[2]!)[0]!), value, `the default of ${key}`);
      const { minimum, maximum } = schema.properties[key] ?? {};
      if (minimum !== undefined || maximum !== undefined)
        assert.equal(cells[3], `${minimum}–${maximum}`, `the range of ${key}`);
    }
  });

  it('lists the fields of each worker type', () => {
    for (const variant of schema.properties.workers.additionalProperties.oneOf) {
      const type = variant.properties.type!.const!;
      const fields = tableRows(section(doc, `### \`${type}\`: ${headingOf(type)}`)).map(
        (cells) => codeSpans(cells[0] ?? '')[0],
      );
      assert.deepEqual(fields.sort(), Object.keys(variant.properties).sort(), `the fields of a ${type} worker`);
    }

    function headingOf(type: string): string {
      const heading = doc.split('\n').find((l) => l.startsWith(`### \`${type}\`: `));
      assert.ok(heading, `a section for the ${type} worker`);
      return heading.slice(`### \`${type}\`: `.length);
    }
  });

  it('has examples that are valid configs', () => {
    const examples = fences(doc).filter((f) => /^jsonc?$/.test(f.info));
    assert.ok(examples.length >= 2, 'at least two examples');
    for (const example of examples) {
      const { issues } = parseConfig(example.lines.join('\n'));
      assert.deepEqual(
        issues.map((i) => formatIssue(i, `${CONFIG_DOC}:${example.line}`)),
        [],
      );
    }
  });

  it('shows the issues of its invalid example as baton validate prints them', () => {
    const all = fences(doc);
    const index = all.findIndex((f) => /^jsonc? invalid$/.test(f.info));
    assert.ok(index >= 0, 'an example marked `invalid`');
    const { issues } = parseConfig(all[index]!.lines.join('\n'));
    const transcript = all[index + 1]!.lines;
    assert.equal(transcript[0], '$ baton validate .baton/config.json');
    const printed = issues.map((i) => formatIssue(i, '.baton/config.json'));
    assert.deepEqual(transcript.slice(1, 1 + printed.length), printed);
    const errors = issues.filter((i) => i.severity === 'error').length;
    const warnings = issues.length - errors;
    assert.equal(
      transcript[1 + printed.length],
      `✗ .baton/config.json: ${errors} error${errors === 1 ? '' : 's'}${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`,
    );
  });
});
