/**
 * Each service's Kafka principal and what its ACLs allow (docs/SECURITY.md): it writes only the topics it
 * produces and reads only in its own consumer groups, those of its deployment (KAFKA_PREFIX: the ACLs name the
 * prefixed topics and groups, each literally, so a principal reaches no other deployment's). The brokers refuse
 * everything else (StandardAuthorizer, allow.everyone.if.no.acl.found=false). Provisioning (SCRAM users and ACLs)
 * runs as the brokers' super user, which no service holds.
 */
import { randomBytes } from 'node:crypto';
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  ResourcePatternTypes,
  type AclEntry,
} from 'kafkajs';
import { GROUPS, TOPICS, busName, type Topic } from './port';
import { newKafka, type KafkaConnection } from './kafka-bus';
import { alterScramUsers } from './kafka-scram';

export interface BusGrant {
  /** Topics it publishes to. */
  produce: Topic[];
  /** Groups it consumes in, each with the topics it reads there. */
  consume: Array<{ group: string; topics: Topic[] }>;
}

/** The services that use the bus and what each may do there (the gateway has no principal). */
export const BUS_GRANTS = {
  tasks: {
    produce: [TOPICS.taskEvents],
    consume: [{ group: GROUPS.tasksImageCalls, topics: [TOPICS.imageCalls] }],
  },
  quota: { produce: [TOPICS.quotaEvents], consume: [] },
  images: { produce: [TOPICS.imageCalls], consume: [] },
  inference: { produce: [TOPICS.frames], consume: [] },
  results: {
    produce: [],
    consume: [
      { group: GROUPS.results, topics: [TOPICS.taskEvents, TOPICS.frames] },
      { group: GROUPS.resultsWebhooks, topics: [TOPICS.taskEvents, TOPICS.quotaEvents] },
    ],
  },
} as const satisfies Record<string, BusGrant>;

export type BusService = keyof typeof BUS_GRANTS;
export const BUS_SERVICES = Object.keys(BUS_GRANTS) as BusService[];

export interface BusPrincipal {
  service: BusService;
  username: string;
  password: string;
}

/**
 * The ACL entries (allow, any host, literal names) that give `username` the grant of `service` in the deployment
 * whose KAFKA_PREFIX is `prefix`: each topic and group named as the brokers know it (busName). Literal, not
 * PREFIXED: a prefixed pattern on `<prefix>vision.frames` would also match any topic whose name starts with it.
 */
export function busAcls(service: BusService, username: string, prefix = ''): AclEntry[] {
  const grant: BusGrant = BUS_GRANTS[service];
  const allow = (
    resourceType: AclResourceTypes,
    resourceName: string,
    operation: AclOperationTypes,
  ): AclEntry => ({
    resourceType,
    resourceName: busName(prefix, resourceName),
    resourcePatternType: ResourcePatternTypes.LITERAL,
    principal: `User:${username}`,
    host: '*',
    operation,
    permissionType: AclPermissionTypes.ALLOW,
  });
  const topic = AclResourceTypes.TOPIC;
  const out: AclEntry[] = [];
  for (const t of grant.produce)
    out.push(allow(topic, t, AclOperationTypes.WRITE), allow(topic, t, AclOperationTypes.DESCRIBE));
  for (const c of grant.consume) {
    out.push(allow(AclResourceTypes.GROUP, c.group, AclOperationTypes.READ));
    for (const t of c.topics)
      out.push(allow(topic, t, AclOperationTypes.READ), allow(topic, t, AclOperationTypes.DESCRIBE));
  }
  // The same topic read in two groups needs its entries once.
  const seen = new Set<string>();
  return out.filter((a) => {
    const k = `${a.resourceType}/${a.resourceName}/${a.operation}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * Resolves once `principal` signs in to the brokers of `admin`: a broker learns a new credential from the
 * metadata log a moment after the controller has committed it. Rejects after `timeoutMs`.
 */
async function waitSignIn(admin: KafkaConnection, principal: BusPrincipal, timeoutMs: number): Promise<void> {
  const sasl = {
    mechanism: 'scram-sha-512' as const,
    username: principal.username,
    password: principal.password,
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = newKafka({ brokers: admin.brokers, sasl }, 'vision-principals').admin({
      retry: { retries: 0 },
    });
    try {
      await client.connect();
      return;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`${principal.username} cannot sign in: ${(err as Error).message}`, {
          cause: err,
        });
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await client.disconnect().catch(() => undefined);
    }
  }
}

/**
 * Creates (or updates) each principal's SCRAM-SHA-512 credential and its ACLs on the topics and groups of the
 * deployment whose KAFKA_PREFIX is `opts.prefix` (default none), signed in to `admin` as the brokers' super user, and
 * resolves once each can sign in. Running it again with the same principals changes nothing but the passwords.
 */
export async function provisionBusPrincipals(
  admin: KafkaConnection,
  principals: BusPrincipal[],
  opts: { signInTimeoutMs?: number; prefix?: string } = {},
): Promise<void> {
  if (principals.length === 0) return;
  await alterScramUsers(admin, {
    upsert: principals.map((p) => ({ name: p.username, password: p.password })),
  });
  const client = newKafka(admin, 'vision-principals').admin();
  await client.connect();
  try {
    await client.createAcls({
      acl: principals.flatMap((p) => busAcls(p.service, p.username, opts.prefix)),
    });
  } finally {
    await client.disconnect();
  }
  for (const p of principals) await waitSignIn(admin, p, opts.signInTimeoutMs ?? 30_000);
}

/**
 * Revokes `usernames`: every ACL of theirs goes, and their SCRAM credential is replaced by one of a random password
 * nobody holds, so their next sign-in fails. The credential is replaced, not deleted: on Kafka 3.9 and 4.1 a broker
 * restarted after a SCRAM deletion no longer signs in the super user whose credential was written at format time.
 */
export async function removeBusPrincipals(admin: KafkaConnection, usernames: string[]): Promise<void> {
  if (usernames.length === 0) return;
  await alterScramUsers(admin, {
    upsert: usernames.map((name) => ({ name, password: randomBytes(32).toString('base64url') })),
  });
  const client = newKafka(admin, 'vision-principals').admin();
  await client.connect();
  try {
    await client.deleteAcls({
      filters: usernames.map((u) => ({
        resourceType: AclResourceTypes.ANY,
        resourcePatternType: ResourcePatternTypes.ANY,
        principal: `User:${u}`,
        host: '*',
        operation: AclOperationTypes.ANY,
        permissionType: AclPermissionTypes.ANY,
      })),
    });
  } finally {
    await client.disconnect();
  }
}
