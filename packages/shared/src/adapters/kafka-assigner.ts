import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

const SUBSCRIPTION_AWARE = 'VisionSubscriptionRoundRobin';

/**
 * Round robin over the members subscribed to each topic. One group may hold consumers of different
 * topics (results subscribes to frames and task events in group `results`, one consumer each);
 * kafkajs' own round robin spreads every topic over every member, so a consumer would be given
 * partitions of a topic it does not read and those messages would never be handled.
 */
export const subscriptionAwareAssigner: PartitionAssigner = ({ cluster }) => ({
  name: SUBSCRIPTION_AWARE,
  version: 0,
  async assign({ members, topics }) {
    const subscribers = new Map<string, string[]>();
    for (const m of members) {
      for (const topic of AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? []) {
        subscribers.set(topic, [...(subscribers.get(topic) ?? []), m.memberId]);
      }
    }
    const assignment = new Map<string, Record<string, number[]>>(members.map((m) => [m.memberId, {}]));
    // kafkajs hands the leader only its own topics and metadata: take every member's topics.
    const all = [...new Set([...topics, ...subscribers.keys()])].sort();
    await cluster.addMultipleTargetTopics(all);
    for (const topic of all) {
      const subs = [...(subscribers.get(topic) ?? [])].sort();
      if (subs.length === 0) continue;
      const partitions = cluster
        .findTopicPartitionMetadata(topic)
        .map((p) => p.partitionId)
        .sort((a, b) => a - b);
      partitions.forEach((partition, i) => {
        const mine = assignment.get(subs[i % subs.length]) as Record<string, number[]>;
        (mine[topic] ??= []).push(partition);
      });
    }
    return members.map((m) => ({
      memberId: m.memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment: assignment.get(m.memberId) ?? {},
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol({ topics }) {
    return {
      name: SUBSCRIPTION_AWARE,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }),
    };
  },
});
