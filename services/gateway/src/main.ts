import { runMain } from '@vision/shared';
import { start } from './index';

runMain('gateway', async (opts) => {
  const gw = await start(opts);
  if (gw.devKey)
    process.stdout.write(
      `Created development API key (shown once, only its hash is stored) for subject "${gw.devKey.subject}":\n  ${gw.devKey.key}\n`,
    );
  return gw;
});
