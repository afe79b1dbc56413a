import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Engine as EngineOfThisCheckout } from '../../../src/engine/index';
import { OTHER_CHECKOUT } from './paths';

/**
 * The engine the tests read and drive the store with, as the CLI would: the one of the
 * checkout whose build is under test (OTHER_CHECKOUT, see paths.ts). Opening a
 * store migrates it to the opener's schema, and an older build refuses a store a newer one
 * has migrated ("written by a newer Baton"): reading it with this checkout's engine would
 * break the build under test rather than test it. Without the variable, this checkout's.
 */
export const Engine: typeof EngineOfThisCheckout = OTHER_CHECKOUT
  ? (
      createRequire(__filename)(resolve(OTHER_CHECKOUT, 'src/engine/index')) as {
        Engine: typeof EngineOfThisCheckout;
      }
    ).Engine
  : EngineOfThisCheckout;
/** The engine's type: this checkout's (an older checkout's engine is used through it). */
export type Engine = EngineOfThisCheckout;
