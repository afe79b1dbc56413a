/**
 * Mocha tests that chain, for a flow clicked through one editor: once a `step` fails, the
 * later steps and checks are skipped (not failed), so the report names the first failure
 * and the run stays short. A `check` (an assertion about the state a step left) needs the
 * chain intact but does not break it when it fails.
 */
export function chainedSteps(): {
  step(title: string, body: () => Promise<void>): void;
  check(title: string, body: () => Promise<void>): void;
} {
  let broken: string | undefined;
  return {
    step(title, body) {
      it(title, async function () {
        if (broken) this.skip();
        try {
          await body();
        } catch (err) {
          broken = title;
          throw err;
        }
      });
    },
    check(title, body) {
      it(title, async function () {
        if (broken) this.skip();
        await body();
      });
    },
  };
}
