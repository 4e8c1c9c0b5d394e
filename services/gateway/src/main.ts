import { runMain } from '@vision/shared';
import type * as Service from './index';

// The service is required only once runMain has started telemetry: its instrumentation patches http
// and express as they are required (a static import loaded them first, and no server span was made).
runMain('gateway', async (opts) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const gw = await (require('./index') as typeof Service).start(opts);
  if (gw.devKey)
    process.stdout.write(
      `Created development API key (shown once, only its hash is stored) for subject "${gw.devKey.subject}":\n  ${gw.devKey.key}\n`,
    );
  return gw;
});
