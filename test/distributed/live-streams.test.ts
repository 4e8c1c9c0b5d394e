/**
 * Live stream tasks against real stream servers (gst-rtsp-server, nginx-rtmp, nginx serving live HLS and
 * progressive MP4 over http/https) on the distributed deployment (Kafka, Postgres, MinIO, one process per
 * service; scripts/test-distributed.sh). The scenario is test/helpers/live-scenario.ts; the standalone
 * suite runs it from test/e2e/live-streams.test.ts.
 */
import { liveStreamScenario } from '../helpers/live-scenario';
import { describeDistributed } from './support';

liveStreamScenario(describeDistributed);
