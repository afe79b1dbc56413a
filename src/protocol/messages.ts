/**
 * Webview ⇄ host messages (DESIGN §6) live here: one discriminated union per direction,
 * validated with zod on receipt on both sides. The dashboard issue fills this in.
 */
export const PROTOCOL_VERSION = 1;
