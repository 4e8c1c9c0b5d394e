/**
 * scripts/distributed/ports.js: the port ranges of the three sets of the stack's servers, which run side by side in
 * `npm test`, never meet each other, the stack servers' fixed ports (read from scripts/stack/common.sh, with each
 * set's shift) or the kernel's ephemeral range; and a pick is in its range, free, and not handed out twice.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort, portRange, type PortKind } from '../../scripts/distributed/ports';

const SETS = ['', 'node', 'kafka'];
const KINDS: PortKind[] = ['services', 'streams'];
const EPHEMERAL_FROM = 32768;

function rangeOf(set: string, kind: PortKind): { from: number; to: number } {
  const before = process.env.VISION_STACK_SET;
  process.env.VISION_STACK_SET = set;
  try {
    return portRange(kind);
  } finally {
    if (before === undefined) delete process.env.VISION_STACK_SET;
    else process.env.VISION_STACK_SET = before;
  }
}

/** The fixed ports of every set of the stack's servers: each `$((base + PORT_SHIFT))` of common.sh, shifted 0, 100, 200. */
function stackPorts(): number[] {
  const common = readFileSync(path.resolve(__dirname, '../../scripts/stack/common.sh'), 'utf8');
  const bases = [...common.matchAll(/\$\(\((\d+) \+ PORT_SHIFT\)\)/g)].map((m) => Number(m[1]));
  expect(bases.length).toBeGreaterThanOrEqual(10);
  // SeaweedFS takes a handful of ports above its base (master, volume, filer, S3 gRPC).
  const seaweed = bases
    .filter((b) => b === 29010)
    .flatMap((b) => Array.from({ length: 10 }, (_, i) => b + i));
  return [...bases, ...seaweed].flatMap((p) => [p, p + 100, p + 200, p + 4]);
}

test('the ranges of the three sets are disjoint, below the ephemeral range and off the stack servers', () => {
  const ranges = SETS.flatMap((set) => KINDS.map((kind) => ({ set, kind, ...rangeOf(set, kind) })));
  for (const [i, a] of ranges.entries()) {
    expect(a.from).toBeLessThan(a.to);
    expect(a.to).toBeLessThan(EPHEMERAL_FROM);
    for (const b of ranges.slice(i + 1)) expect(a.to < b.from || b.to < a.from).toBe(true);
    for (const port of stackPorts()) expect(port < a.from || port > a.to).toBe(true);
  }
});

test('a pick is a port of its range that nothing listens on, and is not handed out again', async () => {
  const { from, to } = portRange('streams');
  // One port of the range held, then so many picks that a pick of it would be all but certain if it were allowed.
  const held = net.createServer();
  await new Promise<void>((resolve) => held.listen(from, '127.0.0.1', resolve));
  try {
    const picks = new Set<number>();
    for (let i = 0; i < (to - from) / 2; i++) {
      const port = await freePort('streams');
      expect(port).toBeGreaterThanOrEqual(from);
      expect(port).toBeLessThanOrEqual(to);
      expect(port).not.toBe(from);
      picks.add(port);
    }
    expect(picks.size).toBe(Math.ceil((to - from) / 2));
  } finally {
    await new Promise((resolve) => held.close(resolve));
  }
});
