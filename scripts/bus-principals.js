#!/usr/bin/env node
'use strict';
/**
 * Provisions the bus of one deployment (docs/SECURITY.md, "Bus principals"): creates its topics when missing and each
 * service's Kafka principal, a SCRAM-SHA-512 user with the ACLs of its grant (BUS_GRANTS) on the deployment's own
 * topics and groups (KAFKA_PREFIX; docs/KUBERNETES-LOGINS.md, "Sharing a Kafka cluster"); another prefix's are not
 * touched. Idempotent: a second run sets the same users' passwords again. Runs as the brokers' super user, which no
 * service holds (compose's `kafka-init`, the chart's migration Job).
 *
 *   KAFKA_BROKERS                            host:port,...
 *   KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD the brokers' super user
 *   KAFKA_SASL_MECHANISM                     how it signs in: scram-sha-512 (default) or plain (a super user defined
 *                                            in the brokers' configuration, as compose's)
 *   KAFKA_<SERVICE>_PASSWORD                 each bus service's password (TASKS, QUOTA, RESULTS, IMAGES, INFERENCE),
 *                                            or KAFKA_<SERVICE>_PASSWORD_FILE
 *   KAFKA_PREFIX                             the deployment's prefix of topics and groups (default none)
 *   KAFKA_<SERVICE>_USERNAME                 its user (default <KAFKA_PREFIX>vision-<service>)
 *   TOPIC_PARTITIONS, TOPIC_REPLICATION_FACTOR  for topics it creates (default 6 and the brokers' default); with
 *                                            TOPIC_PARTITIONS=0 it creates none
 * Passwords are never printed.
 */
const fs = require('node:fs');
const shared = require('@vision/shared');

function setting(name) {
  const file = process.env[`${name}_FILE`];
  if (file) return fs.readFileSync(file, 'utf8').trim();
  return process.env[name];
}

async function main() {
  const brokers = (process.env.KAFKA_BROKERS || '').split(',').filter(Boolean);
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS: required');
  const username = setting('KAFKA_SASL_USERNAME');
  const password = setting('KAFKA_SASL_PASSWORD');
  if (!username || !password)
    throw new Error('KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD: required (the super user)');
  const mechanism = process.env.KAFKA_SASL_MECHANISM || 'scram-sha-512';
  if (!['scram-sha-512', 'plain'].includes(mechanism))
    throw new Error('KAFKA_SASL_MECHANISM: scram-sha-512 or plain');
  const admin = { brokers, sasl: { mechanism, username, password } };
  const prefix = process.env.KAFKA_PREFIX || '';
  shared.busName(prefix, ''); // an invalid prefix stops here, before anything is created
  const principals = shared.BUS_SERVICES.map((service) => {
    const upper = service.toUpperCase();
    const password = setting(`KAFKA_${upper}_PASSWORD`);
    if (!password)
      throw new Error(`KAFKA_${upper}_PASSWORD: required (the ${service} service's Kafka password)`);
    return {
      service,
      username: process.env[`KAFKA_${upper}_USERNAME`] || `${prefix}vision-${service}`,
      password,
    };
  });
  const partitions = Number(process.env.TOPIC_PARTITIONS ?? 6);
  if (partitions > 0) {
    const replicationFactor = Number(process.env.TOPIC_REPLICATION_FACTOR || 0) || undefined;
    const created = await shared.ensureTopics(brokers, shared.busTopics(prefix), partitions, {
      clientId: 'vision-provision',
      sasl: admin.sasl,
      ...(replicationFactor && { replicationFactor }),
    });
    console.log(created ? 'topics created' : 'topics already exist');
  }
  await shared.provisionBusPrincipals(admin, principals, { prefix });
  console.log(`principals: ${principals.map((p) => `${p.service}=${p.username}`).join(', ')}`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`bus-principals: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
