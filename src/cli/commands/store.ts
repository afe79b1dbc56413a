import {
  closeSync,
  createReadStream,
  createWriteStream,
  fsyncSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  type WriteStream,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createInterface } from 'node:readline';
import { BatonError, counted, Engine, type StoreTransferSummary } from '../../engine/index';
import { printJson, READING, requireStore, withEngine, type CommandContext } from '../context';

/** `-` (the default) is stdout for export and stdin for import. */
const STANDARD = '-';

/**
 * `baton store export`: the workspace's whole store as one document (docs/store-transfer.md).
 * A file is written beside its final name and renamed once complete, so a failed export never
 * leaves a document that looks whole. On stdout the summary goes to stderr.
 */
export async function exportStoreCommand(ctx: CommandContext, options: { out?: string }): Promise<void> {
  requireStore(
    ctx,
    () =>
      new BatonError(
        'run.unknown',
        `There is no Baton store in ${ctx.workspace} to export (nothing has run here yet).`,
      ),
  );
  const toStdout = !options.out || options.out === STANDARD;
  const target = toStdout ? undefined : resolve(options.out!);
  const partial = target ? `${target}.${process.pid}.partial` : undefined;
  const stream = partial ? createWriteStream(partial, { mode: 0o600 }) : process.stdout;
  let summary: StoreTransferSummary;
  try {
    summary = await withEngine(ctx, (engine) => engine.exportStore((line) => writeLine(stream, line)), READING);
    if (partial) {
      await closeStream(stream as WriteStream);
      // On disk before it takes its name: a document under the final name is a whole one.
      const fd = openSync(partial, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(partial, target!);
    }
  } catch (err) {
    if (partial) {
      (stream as WriteStream).destroy();
      rmSync(partial, { force: true });
    }
    throw err;
  }
  const where = target ?? 'stdout';
  if (ctx.output.json && target) {
    printJson(ctx, { exported: { file: target, ...summary } });
    return;
  }
  if (ctx.output.json) return;
  const say = toStdout ? ctx.output.err : ctx.output.out;
  say(`Exported ${describe(summary)} to ${where}.`);
}

/**
 * `baton store import`: a document into this workspace's store, which must be empty. The whole
 * document is checked first (stdin is kept in a private temporary file for that), so a bad or
 * cut-short one is refused before any store is opened or created; then it is imported in one
 * transaction.
 */
export async function importStoreCommand(ctx: CommandContext, options: { in?: string }): Promise<void> {
  const fromStdin = !options.in || options.in === STANDARD;
  const spool = fromStdin ? mkdtempSync(join(tmpdir(), 'baton-import-')) : undefined;
  try {
    const path = spool ? join(spool, 'store.jsonl') : resolve(options.in!);
    if (spool) await pipeline(process.stdin, createWriteStream(path, { mode: 0o600 }));
    const source = spool ? 'stdin' : options.in!;
    await Engine.checkStoreDocument(documentLines(path), source);
    const summary = await withEngine(ctx, (engine) => engine.importStore(documentLines(path), source));
    if (ctx.output.json) printJson(ctx, { imported: summary });
    else ctx.output.out(`Imported ${describe(summary)} into the store of ${ctx.workspace}.`);
  } finally {
    if (spool) rmSync(spool, { recursive: true, force: true });
  }
}

/** The document's lines; a file that cannot be read is refused as input, not as an unexpected error. */
async function* documentLines(path: string): AsyncGenerator<string> {
  const input = createReadStream(path, { encoding: 'utf8' });
  const opened = new Promise<void>((resolveOpen, reject) => {
    input.once('open', () => resolveOpen());
    input.once('error', reject);
  });
  try {
    await opened;
  } catch (err) {
    throw new BatonError(
      'store.document-invalid',
      `Cannot read the store document ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  const lines = createInterface({ input, crlfDelay: Infinity });
  try {
    yield* lines;
  } catch (err) {
    // A folder opens but cannot be read (EISDIR); a file can fail part-way (EIO).
    const code = (err as NodeJS.ErrnoException).code;
    if (!code) throw err;
    throw new BatonError('store.document-invalid', `Cannot read the store document ${path}: ${code}.`);
  } finally {
    lines.close();
    input.destroy();
  }
}

function describe(summary: StoreTransferSummary): string {
  const runs = summary.tables.runs ?? 0;
  const events = summary.tables.events ?? 0;
  return `${counted(runs, 'run')}, ${counted(events, 'event')} and every other row (${counted(summary.rows, 'row')} of ${counted(Object.keys(summary.tables).length, 'table')}, schema ${summary.schemaVersion})`;
}

function writeLine(stream: NodeJS.WritableStream, line: string): Promise<void> {
  return new Promise((resolveWrite, reject) => {
    const onError = (err: Error): void => reject(err);
    stream.once('error', onError);
    const done = (): void => {
      stream.removeListener('error', onError);
      resolveWrite();
    };
    if (stream.write(`${line}\n`)) done();
    else stream.once('drain', done);
  });
}

function closeStream(stream: WriteStream): Promise<void> {
  return new Promise((resolveClose, reject) => {
    stream.once('error', reject);
    stream.end(() => resolveClose());
  });
}
