import type { StoreSetting } from '../domain/config';
import { BatonError } from '../domain/errors';
import { FileStore, storeExists, type FileStoreOptions } from './fileStore';
import type { PgStore } from './pgStore';
import type { StorePort } from './port';

/**
 * The PostgreSQL store, loaded on first use: loading the `pg` client costs a command about 80 ms of CPU (its check
 * for a Cloudflare runtime builds a `Response`, which loads Node's fetch), and a workspace on files never needs it.
 */
const loadPgStore = async (): Promise<typeof PgStore> => (await import('./pgStore')).PgStore;

/** The environment variable that holds a PostgreSQL store's URL, password included (docs/team.md). */
export const STORE_URL_VARIABLE = 'BATON_STORE_URL';

/**
 * The variables the store reads (docs/cli.md, "Environment variables"); the `pg` client also
 * reads libpq's own (PGHOST, PGUSER, …) for what the URL leaves out.
 */
export function storeEnvironment(): NodeJS.ProcessEnv {
  return { BATON_STORE_URL: process.env.BATON_STORE_URL, PGPASSWORD: process.env.PGPASSWORD };
}

/** Which store a workspace uses, resolved from its config and the environment. */
export type StoreChoice =
  | { kind: 'file'; dir: string }
  /** `password`: one given apart from the URL (PGPASSWORD, or a lease watchdog's on its stdin); also in `secrets`. */
  | { kind: 'postgres'; url: string; schema: string; secrets: string[]; password?: string };

/**
 * The store a workspace's config names. A PostgreSQL store takes its URL from
 * BATON_STORE_URL when set (the only place a password may be), else from the config.
 */
export function chooseStore(setting: StoreSetting, fileDir: string, env: NodeJS.ProcessEnv): StoreChoice {
  if (setting.kind === 'file') return { kind: 'file', dir: fileDir };
  const url = env[STORE_URL_VARIABLE] || setting.url;
  if (!url) {
    throw new BatonError(
      'config.invalid',
      `The store is PostgreSQL (store.kind "postgres") but no URL is given: set ${STORE_URL_VARIABLE}=postgres://user:password@host:port/database, or store.url in .baton/config.json (without the password).`,
    );
  }
  if (!/^postgres(?:ql)?:\/\//i.test(url)) {
    throw new BatonError(
      'config.invalid',
      `${env[STORE_URL_VARIABLE] ? STORE_URL_VARIABLE : 'store.url'} must be a postgres:// or postgresql:// URL.`,
    );
  }
  return env.PGPASSWORD
    ? { kind: 'postgres', url, schema: setting.schema, secrets: [env.PGPASSWORD], password: env.PGPASSWORD }
    : { kind: 'postgres', url, schema: setting.schema, secrets: [] };
}

/** Opens the chosen store; `file` options apply to the file store only. */
export async function openStore(
  choice: StoreChoice,
  options: { follow: boolean; file?: FileStoreOptions },
): Promise<StorePort> {
  if (choice.kind === 'file') return FileStore.open(choice.dir, { ...options.file, follow: options.follow });
  const pgStore = await loadPgStore();
  return pgStore.open({
    url: choice.url,
    schema: choice.schema,
    secrets: choice.secrets,
    ...(choice.password !== undefined ? { password: choice.password } : {}),
    follow: options.follow,
  });
}

/**
 * `baton doctor`'s look at the store: whether it opens and what its recovery found; for a
 * PostgreSQL store also the connection, the schema version and a read's round trip.
 */
export async function checkStore(
  setting: StoreSetting,
  fileDir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ exists: boolean; notices: readonly string[]; error?: string; detail?: string }> {
  try {
    const choice = chooseStore(setting, fileDir, env);
    if (choice.kind === 'file') {
      if (!storeExists(choice.dir)) return { exists: false, notices: [] };
      const store = await FileStore.open(choice.dir);
      const notices = [...store.recovery.notices];
      await store.close();
      return { exists: true, notices };
    }
    const pgStore = await loadPgStore();
    const store = await pgStore.open({ url: choice.url, schema: choice.schema, secrets: choice.secrets });
    try {
      const started = performance.now();
      const version = await store.read((r) =>
        r.get<{ value: string }>(`SELECT value FROM store_meta WHERE key = 'schema_version'`),
      );
      const ms = Math.round(performance.now() - started);
      return {
        exists: true,
        notices: [...store.recovery.notices],
        detail: `PostgreSQL at ${store.location}: schema version ${version?.value ?? 'none'}, a read took ${ms} ms`,
      };
    } finally {
      await store.close();
    }
  } catch (err) {
    return { exists: true, notices: [], error: (err as Error).message };
  }
}
