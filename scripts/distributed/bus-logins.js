'use strict';
/**
 * The Kafka principals of a deployment (launcher.js) on the stack's broker, where deployments share one broker and
 * its topics: each service that uses the bus gets a SCRAM-SHA-512 user of its own, `<database>-<service>`, with a
 * random password and the ACLs of its grant (BUS_GRANTS in packages/shared/src/bus/kafka-principals.ts).
 * They are created as the broker's super user (the stack's admin, which no service holds) and removed with the
 * deployment.
 */
const { randomBytes } = require('node:crypto');
const { resetTopics } = require('./stack-servers');
const {
  BUS_SERVICES,
  provisionBusPrincipals,
  removeBusPrincipals,
} = require('../../packages/shared/dist/bus/kafka-principals');

/** The broker connection of the stack's super user (provisioning only). */
function stackKafkaAdmin(stack) {
  return { brokers: [stack.kafkaBrokers], ...(stack.kafkaSasl ? { sasl: stack.kafkaSasl } : {}) };
}

const busUser = (prefix, service) => `${prefix}-${service}`;

/** Creates the principals of deployment `prefix`; resolves with `{ <service>: { user, password } }`. */
async function createDeploymentBusLogins(stack, prefix) {
  const logins = {};
  for (const service of BUS_SERVICES)
    logins[service] = { user: busUser(prefix, service), password: randomBytes(18).toString('base64url') };
  await provisionBusPrincipals(
    stackKafkaAdmin(stack),
    BUS_SERVICES.map((service) => ({
      service,
      username: logins[service].user,
      password: logins[service].password,
    })),
  );
  return logins;
}

/** Empties the topics (resetTopics) and creates the principals of deployment `prefix`: its bus starts afresh. */
async function resetBus(stack, prefix) {
  await resetTopics([stack.kafkaBrokers], stack.kafkaSasl);
  return createDeploymentBusLogins(stack, prefix);
}

/** Removes the principals of deployment `prefix` (their credentials and ACLs). */
function dropDeploymentBusLogins(stack, prefix) {
  return removeBusPrincipals(
    stackKafkaAdmin(stack),
    BUS_SERVICES.map((service) => busUser(prefix, service)),
  );
}

/** The environment that signs service `name` in with its own principal (none for a service off the bus). */
function busLoginEnv(logins, name) {
  const login = logins && logins[name];
  return login ? { KAFKA_SASL_USERNAME: login.user, KAFKA_SASL_PASSWORD: login.password } : {};
}

module.exports = { resetBus, dropDeploymentBusLogins, busLoginEnv };
