// Shared helpers for the real-editor tests (test/e2e, and the code-server host of
// test/integration): code-server with Baton installed, Chromium, workspace copies.
export * from './baton';
export * from './browser';
export * from './codeServer';
export * from './editor';
export * from './paths';
export * from './workspace';
export * from './steps';
