/**
 * The one place that keeps a store's password out of what people see: every error, notice,
 * log line, status, diagnosis or event text that may mention a PostgreSQL store goes through
 * `redactCredentials` first (docs/team.md, "Credentials").
 */

const HIDDEN = '***';

/**
 * Variables of Baton's own environment that no worker or verify command inherits (docs/team.md,
 * "Worker credentials"): the store's URL always, and with a PostgreSQL store PGPASSWORD too —
 * then it may be the team database's password, and an agent's environment can end up in its
 * transcript and at its model provider. A worker whose config `env` sets one keeps that.
 */
export function credentialVariables(store: { kind: string }): string[] {
  return store.kind === 'postgres' ? ['BATON_STORE_URL', 'PGPASSWORD'] : ['BATON_STORE_URL'];
}

/** `postgres://user:secret@host` → `postgres://user:***@host`, for any URL in the text. */
const URL_PASSWORD = /((?:postgres|postgresql):\/\/[^\s:/@'"]*:)[^\s'"]*@/gi;
/** `password=secret` as a URL query parameter or a keyword/value connection string. */
const PASSWORD_PARAMETER = /(\bpassword=)[^\s&'"]*/gi;

/**
 * `text` with every password it may hold replaced by `***`: passwords of PostgreSQL URLs and
 * `password=` parameters wherever they appear, and each of `secrets` — the store's own URL
 * (whose password is then known exactly, even one with characters the patterns cannot see
 * the end of) or a bare password such as PGPASSWORD — as written, percent-encoded and decoded.
 */
export function redactCredentials(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let out = text;
  const passwords = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    const fromUrl = urlPassword(secret);
    for (const password of fromUrl !== undefined ? [fromUrl] : /^postgres(?:ql)?:/i.test(secret) ? [] : [secret]) {
      if (!password) continue;
      passwords.add(password);
      passwords.add(encodeURIComponent(password));
      const decoded = safeDecode(password);
      if (decoded) passwords.add(decoded);
    }
  }
  // Longest first, so that a password containing another one is hidden whole.
  for (const password of [...passwords].sort((a, b) => b.length - a.length)) out = out.split(password).join(HIDDEN);
  return out.replace(URL_PASSWORD, `$1${HIDDEN}@`).replace(PASSWORD_PARAMETER, `$1${HIDDEN}`);
}

/** A URL fit to show: its password (if any) replaced by `***`. */
export function displayUrl(url: string): string {
  return redactCredentials(url, [url]);
}

/** Whether a connection URL carries a password (in its user part or as a parameter). */
export function urlHasPassword(url: string): boolean {
  return Boolean(urlPassword(url)) || /[?&]password=[^&]/i.test(url);
}

/** The password of a postgres:// URL, raw as written; undefined when it has none or is no such URL. */
function urlPassword(url: string): string | undefined {
  if (!/^postgres(?:ql)?:\/\//i.test(url)) return undefined;
  const query = /[?&]password=([^&#]*)/i.exec(url)?.[1];
  // The user part ends at the last '@' before the host: a password may hold an unencoded '@'.
  const userInfo = /^postgres(?:ql)?:\/\/([^/?#]*)@/i.exec(url)?.[1] ?? '';
  const colon = userInfo.indexOf(':');
  const password = colon < 0 ? '' : userInfo.slice(colon + 1);
  return password || query || undefined;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
