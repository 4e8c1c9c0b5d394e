import { standaloneOnly } from '../helpers/composition';
import { transportStack } from './support';

interface RunningAttack {
  held(connections: number): Promise<void>;
  stop(): Promise<number | null>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startAttack, wellBehavedCall } = require('../../scripts/transport/slow-attack') as {
  startAttack(
    url: string,
    attack: string,
    opts: { seconds: number; connections: number; rate: number; intervalS: number },
  ): RunningAttack;
  wellBehavedCall(url: string, key: string): Promise<{ status: number }>;
};

const KEY = 'transport-attack-0123456789';
/** Connections the server must hold open for the attack before the well-behaved client calls, and its calls. */
const HELD = 50;
const CALLS = 20;

/**
 * slowhttptest's three attacks, scaled down, each with a well-behaved client calling once the server holds the
 * attack's connections: every one of its calls is answered 200 (no 5xx, reset or timeout). How fast they are
 * answered is measured by bench/slow-attacks.bench.js, not here. The attacks hold the gateway's own connections (no head completes, no
 * body reaches a service, /openapi.json is the gateway's), so the standalone suite alone runs them: there the six
 * services share the gateway's loop and descriptor table, the harder place for the well-behaved client.
 */
const atTheGateway = standaloneOnly(
  'the attacks reach only the gateway server, which both compositions run alike',
);

atTheGateway.describe('transport: slow attacks with a well-behaved client alongside', () => {
  const stack = transportStack(KEY, 'transport-attack');

  it.each(['slowloris', 'slow-body', 'slow-read'])(
    '%s: while the attack holds connections open, every well-behaved call is answered 200',
    async (attack) => {
      // Longer than the case: the attack ends when stopped, not after a fixed time.
      const running = startAttack(stack().url, attack, {
        seconds: 600,
        connections: 300,
        rate: 100,
        intervalS: 3,
      });
      try {
        // The attack really runs: slowhttptest reports the server holding this many of its connections open.
        await running.held(HELD);
        const statuses: number[] = [];
        for (let i = 0; i < CALLS; i++) statuses.push((await wellBehavedCall(stack().url, KEY)).status);
        expect(statuses).toEqual(Array.from({ length: CALLS }, () => 200));
      } finally {
        expect(await running.stop()).toBe(0);
      }
    },
    60_000,
  );
});
