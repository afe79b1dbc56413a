import { resolve } from 'node:path';

/** The repository root. */
export const ROOT = resolve(__dirname, '../../..');
/**
 * Another checkout whose build the e2e tests run against, if BATON_E2E_EXTENSION_ROOT names one
 * (a checkout with its own `npm run build`, e.g. a `git worktree` of another commit, to tell
 * whether a failure comes from the tests or from the build under test). The one reader of the
 * variable: its build, demo, engine and store code are then the ones used.
 */
export const OTHER_CHECKOUT: string | undefined = process.env.BATON_E2E_EXTENSION_ROOT || undefined;
/** The checkout whose build is under test: OTHER_CHECKOUT, or this repository. */
export const CHECKOUT_UNDER_TEST = OTHER_CHECKOUT ?? ROOT;
/** Screenshots and other artefacts of the real-editor tests (ignored by git). */
export const RESULTS_DIR = resolve(ROOT, 'test-results');
/** The workspace the integration and end-to-end tests open, always as a fresh copy. */
export const FIXTURE_WORKSPACE = resolve(ROOT, 'test/integration/fixtures/workspace');
/**
 * The demo workspace (`npm start`, README screenshots), of the checkout under test: its agent
 * and config belong to that build (an older build refuses today's config; the demo agent is
 * part of what it shipped).
 */
export const DEMO_WORKSPACE = resolve(CHECKOUT_UNDER_TEST, 'examples/demo');
