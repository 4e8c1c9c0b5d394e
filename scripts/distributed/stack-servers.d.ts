/** Types of the parts of scripts/distributed/stack-servers.js that the tests use besides launcher.js's. */
import type { Client } from 'minio';
import type { StackEnv } from './launcher';

/**
 * Deletes the topics of the deployment whose KAFKA_PREFIX is `prefix` (default none) and creates them again, empty,
 * signed in as `sasl` (the stack's super user); another prefix's topics are left as they are.
 */
export function resetTopics(brokers: string[], sasl: StackEnv['kafkaSasl'], prefix?: string): Promise<void>;

/** The connection settings scripts/stack/start.sh wrote (stack.env of the set of servers VISION_STACK_SET names). */
export function readStackEnv(): StackEnv;

/** A client of the stack's S3 server (path-style, the stack's keys). */
export function minioClient(stack: StackEnv): Client;

/** Removes a bucket with every object in it; nothing when it does not exist. */
export function removeBucket(client: Client, bucket: string): Promise<void>;
