import { runMain } from '@vision/shared';
import type * as Service from './index';

// The service is required only once runMain has started telemetry: its instrumentation patches http
// and express as they are required (a static import loaded them first, and no server span was made).
// eslint-disable-next-line @typescript-eslint/no-require-imports
runMain('quota', (opts) => (require('./index') as typeof Service).start(opts));
