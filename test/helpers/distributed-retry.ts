/**
 * Against the distributed deployment (real Kafka, Postgres, Redis, S3 on a 2-core machine) a test
 * that fails is run once more, with the first failure printed, so that a timing hiccup of a server
 * does not fail the whole run; a test that fails twice still fails. Standalone runs never retry.
 */
if (process.env.E2E_STACK === 'distributed') jest.retryTimes(1, { logErrorsBeforeRetry: true });
