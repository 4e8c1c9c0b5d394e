import { AssignerProtocol, Kafka, logLevel } from 'kafkajs';
import type { DistributedStack } from '../helpers/distributed';
import { client, clip, describeDistributed, KEY, startFaultStack, waitFor } from './support';

const LIMITED = 'dist-fault-limited-0123456789';

describeDistributed('two gateway and two results replicas', () => {
  let stack: DistributedStack;
  beforeAll(async () => {
    stack = await startFaultStack({
      replicas: { gateway: 2, results: 2 },
      keys: `${KEY}:acme,${LIMITED}:limited`,
      env: {
        GATEWAY_LIMIT_OVERRIDES: JSON.stringify({ limited: { qps: 1, burst: 4 } }),
        TASKS_POLL_INTERVAL_MS: '300',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('share the per-key limits through Redis', async () => {
    const [a, b] = stack.deployment.urls('gateway').map((u) => client(stack, u, LIMITED));
    // 1/s + burst 4 allows about 5 at once for the key, whichever replica answers; limits kept per
    // process would allow about 10 here.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await a.api('GET', '/v1/vision/quota')).status);
      statuses.push((await b.api('GET', '/v1/vision/quota')).status);
    }
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    const allowed = statuses.filter((s) => s === 200).length;
    expect(allowed).toBeGreaterThanOrEqual(4);
    expect(allowed).toBeLessThanOrEqual(7);
  });

  it('consume each frame once per consumer group, spread over both replicas', async () => {
    const c = client(stack);
    const created = await c.upload(clip('pedestrians_vtest_opencv_10s.mov'));
    expect(created.status).toBe(201);
    const id = created.body.task_id as string;
    expect((await c.waitForStatus(id, ['succeeded', 'failed'])).status).toBe('succeeded');
    const frames = await c.allFrames(id, 500);
    expect(frames.length).toBeGreaterThan(40);
    expect(new Set(frames.map((f) => f.frame_id)).size).toBe(frames.length);

    // The group `results`: every partition of each topic belongs to exactly one member, and the
    // frames topic is split between the two processes (members of one process share its client host/id).
    const kafka = new Kafka({
      brokers: [stack.deployment.stack.kafkaBrokers],
      sasl: stack.deployment.stack.kafkaSasl,
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    try {
      // A rebalance may be under way when we look (a member replaced after a crash rejoins within seconds); a
      // member missing for good still fails here.
      const group = await waitFor(
        'the results group to be Stable with 4 members',
        async () => {
          const [g] = (await admin.describeGroups(['results'])).groups;
          return g.state === 'Stable' && g.members.length === 4 ? g : undefined;
        },
        30_000,
      );
      const owners = new Map<string, string>();
      const frameMembers = new Set<string>();
      for (const m of group.members) {
        const a = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
        for (const [topic, partitions] of Object.entries(a?.assignment ?? {})) {
          for (const p of partitions) {
            const key = `${topic}/${p}`;
            expect(owners.has(key)).toBe(false);
            owners.set(key, m.memberId);
            if (topic === 'vision.frames') frameMembers.add(m.memberId);
          }
        }
      }
      expect(owners.size).toBe(12); // 2 topics x 6 partitions
      expect(frameMembers.size).toBe(2);
      // Committed offsets cover every frame message (published = consumed once by the group).
      const committed = await admin.fetchOffsets({ groupId: 'results', topics: ['vision.frames'] });
      const high = await admin.fetchTopicOffsets('vision.frames');
      const sum = (xs: { offset: string }[]) => xs.reduce((n, x) => n + Math.max(0, Number(x.offset)), 0);
      expect(sum(committed[0].partitions)).toBe(sum(high.map((h) => ({ offset: h.high }))));
    } finally {
      await admin.disconnect();
    }
  }, 180_000);
});
