import { findSourceMap } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces that point into test/integration/*.ts instead of the bundles in
 * out/integration. Node maps them itself only while nobody replaced
 * Error.prepareStackTrace, and the extension host does (to tell which extension threw):
 * this wraps the host's function, keeps its side effects, and maps the frames of bundles
 * under `bundleDir` with their inline source maps, leaving out mocha's and Node's frames (Node parses them once
 * process.setSourceMapsEnabled(true) is on, for modules loaded after that).
 */
export function mapStackTraces(bundleDir: string, root: string): void {
  process.setSourceMapsEnabled(true);
  const previous = Error.prepareStackTrace;
  Error.prepareStackTrace = (error, frames) => {
    const hostResult: unknown = previous ? previous(error, frames) : undefined;
    if (!frames.some((frame) => frame.getFileName()?.startsWith(bundleDir))) {
      return hostResult ?? `${String(error)}${frames.map((frame) => `\n    at ${frame.toString()}`).join('')}`;
    }
    // The runner's bundle is mocha (its own frames, which mocha would filter out unbundled).
    const runner = join(bundleDir, 'index.js');
    const kept = frames.filter(
      (frame) => frame.getFileName() !== runner && !frame.getFileName()?.startsWith('node:internal'),
    );
    return `${String(error)}${kept.map((frame) => `\n    at ${mapFrame(frame, root)}`).join('')}`;
  };
}

function mapFrame(frame: NodeJS.CallSite, root: string): string {
  const file = frame.getFileName();
  const line = frame.getLineNumber();
  const column = frame.getColumnNumber();
  if (!file || line === null || column === null) return frame.toString();
  const entry = findSourceMap(file)?.findEntry(line - 1, column - 1);
  if (!entry || !('originalSource' in entry) || !entry.originalSource) return frame.toString();
  const source = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : entry.originalSource;
  const location = `${relative(root, source)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  const name = frame.getFunctionName() ?? frame.getMethodName();
  return name ? `${name} (${location})` : location;
}
