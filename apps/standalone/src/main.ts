import { ConfigError, createLogger, installCrashHandler, startTelemetry } from '@vision/shared';
import type * as StandaloneModule from './index';

// Telemetry first, so that its instrumentation patches http, express, pg and kafkajs before they load.
// Each of the six services reports under its own name (service-context.ts); work outside them reports
// as OTEL_SERVICE_NAME (default vision-standalone).
const telemetry = startTelemetry(process.env.OTEL_SERVICE_NAME ?? 'vision-standalone', {
  ...process.env,
  VISION_MODE: 'standalone',
});
installCrashHandler(createLogger('standalone'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startStandalone } = require('./index') as typeof StandaloneModule;

/** `npm start`: the whole service in one process, no external servers. */
startStandalone()
  .then((s) => {
    const out = process.stdout;
    out.write(`\nVision recognition service (standalone) is up at ${s.url}\n`);
    out.write(`Metrics (Prometheus, all six services by label \`service\`): ${s.metrics.url}\n`);
    out.write(`Data directory: ${s.env.VISION_DATA_DIR}\nModels directory: ${s.env.VISION_MODELS_DIR}\n`);
    if (s.gateway.devKey) {
      out.write(
        `\nCreated a development API key for subject "${s.gateway.devKey.subject}". It is shown only now; only its hash is stored:\n\n  ${s.gateway.devKey.key}\n`,
      );
      out.write(
        `\nTry it:\n\n  curl -H 'Authorization: Bearer ${s.gateway.devKey.key}' ${s.url}/api/op/v1/scenes\n\n`,
      );
    } else {
      out.write(
        `\nTry it (with the key printed at first start, or one from VISION_API_KEYS / npm run keys):\n\n  curl -H "Authorization: Bearer $VISION_API_KEY" ${s.url}/api/op/v1/scenes\n\n`,
      );
    }
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      s.close()
        .then(() => telemetry.shutdown())
        .then(
          () => process.exit(0),
          () => process.exit(1),
        );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  })
  .catch((err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
