/**
 * SCRAM-SHA-512 credentials of Kafka principals (AlterUserScramCredentials, KIP-554), which kafkajs' admin has no
 * method for: the request is written here and sent over a kafkajs broker connection signed in as the admin.
 * The broker stores the salted password the client derives (PBKDF2-HMAC-SHA-512); the password itself never
 * leaves this process.
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import Broker from 'kafkajs/src/broker';
import { createLogger } from 'kafkajs/src/loggers';
import ConnectionPool from 'kafkajs/src/network/connectionPool';
import socketFactory from 'kafkajs/src/network/socketFactory';
import Encoder from 'kafkajs/src/protocol/encoder';
import type { KafkaConnection } from './kafka-bus';

const ALTER_USER_SCRAM_CREDENTIALS = 51;
/** ScramMechanism.SCRAM_SHA_512 in the Kafka protocol. */
const SCRAM_SHA_512 = 2;
/** Kafka's own default (and minimum) for SCRAM-SHA-512. */
const ITERATIONS = 4096;

/** An unsigned varint (the lengths of the protocol's compact types). */
function uvarint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}
const compactBytes = (b: Buffer): Buffer => Buffer.concat([uvarint(b.length + 1), b]);
const compactString = (s: string): Buffer => compactBytes(Buffer.from(s, 'utf8'));
const NO_TAGS = Buffer.from([0]);
const int32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

/**
 * The body of AlterUserScramCredentials v0, behind the empty tagged fields that end a flexible request header
 * (kafkajs writes header v1; v2 is v1 and those tagged fields).
 */
export function encodeAlterScram(
  upsert: Array<{ name: string; password: string }>,
  remove: string[],
  salt: () => Buffer = () => randomBytes(32),
): Buffer {
  const deletions = remove.map((name) =>
    Buffer.concat([compactString(name), Buffer.from([SCRAM_SHA_512]), NO_TAGS]),
  );
  const upsertions = upsert.map((u) => {
    const s = salt();
    const salted = pbkdf2Sync(u.password, s, ITERATIONS, 64, 'sha512');
    return Buffer.concat([
      compactString(u.name),
      Buffer.from([SCRAM_SHA_512]),
      int32(ITERATIONS),
      compactBytes(s),
      compactBytes(salted),
      NO_TAGS,
    ]);
  });
  return Buffer.concat([
    NO_TAGS,
    uvarint(deletions.length + 1),
    ...deletions,
    uvarint(upsertions.length + 1),
    ...upsertions,
    NO_TAGS,
  ]);
}

/** Per user, the error of an AlterUserScramCredentials v0 response (after its header's tagged fields). */
export function decodeAlterScramResponse(
  raw: Buffer,
): Array<{ user: string; errorCode: number; message?: string }> {
  let at = 0;
  const readUvarint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = raw[at++];
      if (b === undefined) throw new Error('AlterUserScramCredentials: truncated response');
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value;
    }
  };
  const readCompactString = (): string | undefined => {
    const n = readUvarint();
    if (n === 0) return undefined;
    const s = raw.subarray(at, at + n - 1).toString('utf8');
    at += n - 1;
    return s;
  };
  const skipTags = (): void => {
    for (let fields = readUvarint(); fields > 0; fields--) {
      readUvarint();
      at += readUvarint();
    }
  };
  skipTags(); // response header v1
  at += 4; // throttle_time_ms
  const results: Array<{ user: string; errorCode: number; message?: string }> = [];
  for (let n = readUvarint() - 1; n > 0; n--) {
    const user = readCompactString() ?? '';
    const errorCode = raw.readInt16BE(at);
    at += 2;
    const message = readCompactString();
    skipTags();
    results.push({ user, errorCode, ...(message ? { message } : {}) });
  }
  return results;
}

/**
 * Sets the SCRAM-SHA-512 credential of each `upsert` user (creating the user) and removes those of `remove`, over
 * the first broker of `conn` signed in as its (super) user. Rejects naming each user the broker refused (a user
 * without a credential to remove is not an error).
 */
export async function alterScramUsers(
  conn: KafkaConnection,
  change: { upsert?: Array<{ name: string; password: string }>; remove?: string[] },
): Promise<void> {
  const [host, port] = (conn.brokers[0] ?? '').split(':');
  if (!host || !port) throw new Error('alterScramUsers: no broker');
  const logger = createLogger({ level: 1, logCreator: () => () => undefined });
  const pool = new ConnectionPool({
    host,
    port: Number(port),
    logger,
    socketFactory: socketFactory(),
    ...(conn.sasl ? { sasl: { ...conn.sasl } } : {}),
    clientId: 'vision-principals',
    connectionTimeout: 5000,
    requestTimeout: 30_000,
  });
  const broker = new Broker({ connectionPool: pool, logger });
  await broker.connect();
  try {
    const body = encodeAlterScram(change.upsert ?? [], change.remove ?? []);
    const raw = await pool.send({
      request: {
        apiKey: ALTER_USER_SCRAM_CREDENTIALS,
        apiVersion: 0,
        apiName: 'AlterUserScramCredentials',
        encode: () => Promise.resolve(new Encoder().writeBuffer(body)),
      },
      response: { decode: (b) => Promise.resolve(b), parse: (b) => Promise.resolve(b) },
    });
    // 91 RESOURCE_NOT_FOUND: a removed user that had no credential.
    const failed = decodeAlterScramResponse(raw).filter(
      (r) => r.errorCode !== 0 && !(r.errorCode === 91 && change.remove?.includes(r.user)),
    );
    if (failed.length > 0)
      throw new Error(
        `AlterUserScramCredentials refused: ${failed.map((f) => `${f.user} (${f.errorCode}${f.message ? `: ${f.message}` : ''})`).join(', ')}`,
      );
  } finally {
    await broker.disconnect();
  }
}
