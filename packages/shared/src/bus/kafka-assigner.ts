import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

/** The group protocol name of the assignment below, the same for every client the bus runs on. */
export const SUBSCRIPTION_AWARE = 'VisionSubscriptionRoundRobin';

/** A member of a group and the topics it subscribes to. */
export interface GroupMember {
  id: string;
  topics: readonly string[];
}

/**
 * Round robin over the members subscribed to each topic: for each topic (sorted), its partitions (sorted) go in
 * turn to the members that read it (sorted by id). One group may hold consumers of different topics (results
 * subscribes to frames and task events in group `results`, one consumer each); a plain round robin spreads every
 * topic over every member, so a consumer would be given partitions of a topic it does not read and those messages
 * would never be handled. Every member gets an entry, empty when it reads nothing that has partitions.
 */
export function assignBySubscription(
  members: readonly GroupMember[],
  partitionsOf: (topic: string) => readonly number[],
): Map<string, Record<string, number[]>> {
  const subscribers = new Map<string, string[]>();
  for (const m of members) {
    for (const topic of new Set(m.topics)) subscribers.set(topic, [...(subscribers.get(topic) ?? []), m.id]);
  }
  const assignment = new Map<string, Record<string, number[]>>(members.map((m) => [m.id, {}]));
  for (const topic of [...subscribers.keys()].sort()) {
    const subs = [...(subscribers.get(topic) ?? [])].sort();
    const partitions = [...partitionsOf(topic)].sort((a, b) => a - b);
    partitions.forEach((partition, i) => {
      const mine = assignment.get(subs[i % subs.length]) as Record<string, number[]>;
      (mine[topic] ??= []).push(partition);
    });
  }
  return assignment;
}

/** {@link assignBySubscription} as a kafkajs partition assigner. */
export const subscriptionAwareAssigner: PartitionAssigner = ({ cluster }) => ({
  name: SUBSCRIPTION_AWARE,
  version: 0,
  async assign({ members, topics }) {
    const group = members.map((m) => ({
      id: m.memberId,
      topics: AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? [],
    }));
    // kafkajs hands the leader only its own topics and metadata: take every member's topics.
    await cluster.addMultipleTargetTopics([...new Set([...topics, ...group.flatMap((m) => m.topics)])]);
    const assignment = assignBySubscription(group, (topic) =>
      cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId),
    );
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
