import { standaloneOnly } from '../helpers/composition';
import { transportStack } from './support';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runAttack } = require('../../scripts/transport/slow-attack') as {
  runAttack(
    url: string,
    key: string,
    attack: string,
    opts: { seconds: number; connections: number; rate: number; intervalS: number },
  ): Promise<{
    connectionsHeld: number;
    calls: number;
    failed: number;
    fiveXx: number;
    exitCode: number;
    output: string;
  }>;
};

const KEY = 'transport-attack-0123456789';

/**
 * slowhttptest's three attacks, scaled down, each with a well-behaved client calling beside it: every
 * one of its calls is answered 200 (no 5xx, reset or timeout). How fast they are answered is measured by
 * bench/slow-attacks.bench.js, not here. The attacks hold the gateway's own connections (no head completes, no
 * body reaches a service, /openapi.json is the gateway's), so the standalone suite alone runs them: there the six
 * services share the gateway's loop and descriptor table, the harder place for the well-behaved client.
 */
const atTheGateway = standaloneOnly(
  'the attacks reach only the gateway server, which both compositions run alike',
);

atTheGateway.describe('transport: slow attacks with a well-behaved client alongside', () => {
  const stack = transportStack(KEY, 'transport-attack');

  it.each(['slowloris', 'slow-body', 'slow-read'])(
    '%s: the attack holds connections and every well-behaved call is answered 200',
    async (attack) => {
      const r = await runAttack(stack().url, KEY, attack, {
        seconds: 12,
        connections: 300,
        rate: 100,
        intervalS: 3,
      });
      expect(r.exitCode).toBe(0);
      // The attack really ran: the server held its connections open.
      expect(r.connectionsHeld).toBeGreaterThan(50);
      expect(r.calls).toBeGreaterThan(20);
      expect({ failed: r.failed, fiveXx: r.fiveXx }).toEqual({ failed: 0, fiveXx: 0 });
    },
    60_000,
  );
});
