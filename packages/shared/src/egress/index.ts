/**
 * Egress to hosts a caller names (stream URLs, webhook receivers): which addresses may be reached
 * (address-policy.ts, host-check.ts), the proxy and pinned connections that hold a checked address
 * (egress-proxy.ts, pinned-agent.ts, pinned-relay.ts, rtsp-reply-watch.ts), and the bare environment a
 * decoder reading such a stream runs with (decoder-env.ts).
 */
export * from './address-policy';
export * from './host-check';
export * from './egress-proxy';
export * from './decoder-env';
export * from './pinned-relay';
export * from './rtsp-reply-watch';
export * from './pinned-agent';
