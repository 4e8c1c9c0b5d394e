import type { IncomingMessage } from 'node:http';
import { propagation } from '@opentelemetry/api';
import { W3CBaggagePropagator, W3CTraceContextPropagator, CompositePropagator } from '@opentelemetry/core';
import { upstreamHeaders } from '../../src/http/forward-headers';

const request = (headers: IncomingMessage['headers']) =>
  ({ headers, socket: { remoteAddress: '10.0.0.7' } }) as unknown as IncomingMessage;

describe('upstreamHeaders', () => {
  afterEach(() => propagation.disable());

  it("leaves out the client's trace context (the gateway's own span is injected instead) and hop-by-hop headers", () => {
    propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    );
    const out = upstreamHeaders(
      request({
        host: 'api.example',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'x=1',
        baggage: 'k=v',
        connection: 'keep-alive',
        'transfer-encoding': 'chunked',
        'x-request-id': 'r1',
      }),
    );
    expect(out).toEqual({
      'x-request-id': 'r1',
      'x-forwarded-for': '10.0.0.7',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'api.example',
    });
  });
});
