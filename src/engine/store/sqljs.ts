import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import initSqlJs from 'sql.js';
import type { SqlJsStatic } from 'sql.js';

let loading: Promise<SqlJsStatic> | undefined;

/**
 * Loads sql.js from the wasm file on disk (next to the bundle, or from node_modules when
 * running from source). `wasmBinary` means sql.js never tries to fetch anything.
 */
export function loadSqlJs(): Promise<SqlJsStatic> {
  loading ??= initSqlJs({ wasmBinary: toArrayBuffer(readFileSync(locateWasm())) });
  return loading;
}

function locateWasm(): string {
  const bundled = join(__dirname, 'sql-wasm.wasm');
  if (existsSync(bundled)) return bundled;
  // Running from source (tests, tsx): the package's own copy.
  return createRequire(__filename).resolve('sql.js/dist/sql-wasm.wasm');
}

function toArrayBuffer(buffer: Buffer): ArrayBuffer {
  return buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
}
