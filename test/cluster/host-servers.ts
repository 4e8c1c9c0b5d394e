import { hostIp } from './kube-tools';

/**
 * A test release's allowances for servers on the host's end of the node's network (never a production setting): the
 * services take private stream and webhook addresses (STREAM_ALLOW_PRIVATE_NETWORKS, WEBHOOK_ALLOW_PRIVATE_NETWORKS),
 * and the pods that open streams may reach the camera's port on the host (networkPolicy.streamEgress.extraEgress).
 * The probe of a live source gets more time than its 5 s default on this two-core node.
 */
export const hostServers = (cameraPort: number): string[] => [
  ...['--set-string', 'config.STREAM_ALLOW_PRIVATE_NETWORKS=true'],
  ...['--set-string', 'config.WEBHOOK_ALLOW_PRIVATE_NETWORKS=true'],
  ...['--set-string', 'config.TASKS_PROBE_TIMEOUT_MS=30000'],
  '--set-json',
  `networkPolicy.streamEgress.extraEgress=${JSON.stringify([
    { to: [{ ipBlock: { cidr: `${hostIp()}/32` } }], ports: [{ port: cameraPort, protocol: 'TCP' }] },
  ])}`,
];
