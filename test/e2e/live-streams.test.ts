/**
 * Live stream tasks against real stream servers (gst-rtsp-server, nginx-rtmp, nginx serving live HLS and
 * progressive MP4 over http/https) on the standalone stack. The scenario is test/helpers/live-scenario.ts;
 * the distributed suite runs it from test/distributed/live-streams.test.ts.
 */
import { standaloneOnly } from '../helpers/composition';
import { liveStreamScenario } from '../helpers/live-scenario';

liveStreamScenario(
  standaloneOnly('test/distributed/live-streams.test.ts runs the same scenario there').describe,
);
