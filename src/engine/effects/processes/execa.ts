/**
 * execa is an ES module; the engine is loaded as CommonJS (the extension host, tsx in
 * tests). A dynamic import loads it natively there and is inlined by the bundler.
 */
type Execa = typeof import('execa'); // eslint-disable-line @typescript-eslint/consistent-type-imports -- a type-only view of an ES module loaded on demand

let loading: Promise<Execa> | undefined;

export function loadExeca(): Promise<Execa> {
  loading ??= import('execa');
  return loading;
}
