/**
 * Which composition a test of test/e2e or test/transport runs in. The same files run in the standalone suite
 * (`npx jest`: one process, PGlite, the in-process bus and limiters, the directory object store) and in the
 * distributed one (scripts/test-distributed.sh sets E2E_STACK=distributed: six service processes or containers on
 * Postgres, Kafka, Redis and S3). A case whose behaviour the two compositions cannot change (decided before any hop
 * by code both run alike, or a stack the test starts itself) is proven once, in the standalone suite:
 *
 *   const once = standaloneOnly('the gateway answers the head before it forwards anything');
 *   once.it('…', async () => { … });
 *
 * Under E2E_STACK=distributed such a case is skipped, its name ending with the reason. docs/TESTING.md ("Which
 * composition proves what") lists every file and every reason; test/docs/compositions.test.ts holds the two equal.
 */
export const DISTRIBUTED = process.env.E2E_STACK === 'distributed';

export interface OneComposition {
  it: jest.It;
  describe: jest.Describe;
}

/** The name a skipped case or block gets: its own, then why the standalone suite alone proves it. */
const skippedName = (name: string, why: string): string => `${name} (standalone only: ${why})`;

/**
 * `it` and `describe` for cases that the standalone suite alone proves, `why` in one line (no `%` or `$`: jest
 * would read them as a table's placeholders). In the standalone suite they are jest's own; in the distributed
 * one they skip, with the reason in the name.
 */
export function standaloneOnly(why: string): OneComposition {
  if (/[%$]/.test(why)) throw new Error(`a composition reason may not hold % or $: ${why}`);
  if (!DISTRIBUTED) return { it, describe };
  const name = (n: string) => skippedName(n, why);
  const skipIt = Object.assign(
    (n: string, fn?: jest.ProvidesCallback, timeout?: number) => it.skip(name(n), fn, timeout),
    {
      each:
        (...table: Parameters<typeof it.each>) =>
        (n: string, fn: (...args: never[]) => unknown, timeout?: number) =>
          (it.skip.each as (...t: unknown[]) => (n: string, f: unknown, t?: number) => void)(...table)(
            name(n),
            fn,
            timeout,
          ),
    },
  );
  const skipDescribe = Object.assign((n: string, fn: jest.EmptyFunction) => describe.skip(name(n), fn), {
    each:
      (...table: Parameters<typeof describe.each>) =>
      (n: string, fn: (...args: never[]) => unknown, timeout?: number) =>
        (describe.skip.each as (...t: unknown[]) => (n: string, f: unknown, t?: number) => void)(...table)(
          name(n),
          fn,
          timeout,
        ),
  });
  return { it: skipIt as unknown as jest.It, describe: skipDescribe as unknown as jest.Describe };
}
