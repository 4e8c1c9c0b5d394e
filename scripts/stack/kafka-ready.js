#!/usr/bin/env node
// Exits 0 when the Kafka broker at argv[2] answers a metadata request (used by scripts/stack/start.sh), signed in
// as KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD (SCRAM-SHA-512) when they are set.
const { Kafka, logLevel } = require('kafkajs');

const kafka = new Kafka({
  clientId: 'vision-stack-ready',
  brokers: [process.argv[2] ?? '127.0.0.1:29092'],
  logLevel: logLevel.NOTHING,
  retry: { retries: 0 },
  connectionTimeout: 2000,
  ...(process.env.KAFKA_SASL_USERNAME
    ? {
        sasl: {
          mechanism: 'scram-sha-512',
          username: process.env.KAFKA_SASL_USERNAME,
          password: process.env.KAFKA_SASL_PASSWORD ?? '',
        },
      }
    : {}),
});
const admin = kafka.admin();
admin
  .connect()
  .then(() => admin.describeCluster())
  .then(async (c) => {
    await admin.disconnect();
    process.exit(c.brokers.length > 0 && c.controller !== null ? 0 : 1);
  })
  .catch(() => process.exit(1));
