import { resolve } from 'node:path';

/** The repository root. */
export const ROOT = resolve(__dirname, '../../..');
/** Screenshots and other artefacts of the real-editor tests (ignored by git). */
export const RESULTS_DIR = resolve(ROOT, 'test-results');
/** The workspace the integration and end-to-end tests open, always as a fresh copy. */
export const FIXTURE_WORKSPACE = resolve(ROOT, 'test/integration/fixtures/workspace');
/**
 * The demo workspace (`npm start`, README screenshots), of the checkout whose build is under
 * test (BATON_E2E_EXTENSION_ROOT, see codeServer.ts): its agent and config belong to that
 * build (an older build refuses today's config; the demo agent is part of what it shipped).
 */
export const DEMO_WORKSPACE = resolve(process.env.BATON_E2E_EXTENSION_ROOT || ROOT, 'examples/demo');
