/**
 * The parts of kafkajs' internals that kafka-scram.ts uses to send a request kafkajs has no method for
 * (AlterUserScramCredentials): one broker connection, authenticated as the client's SASL principal; and the request
 * queue whose idle timer kafkajs-request-queue.ts stops.
 */
declare module 'kafkajs/src/network/connectionPool' {
  import type { SASLOptions } from 'kafkajs';
  import type Encoder from 'kafkajs/src/protocol/encoder';
  export interface ProtocolRequest {
    request: {
      apiKey: number;
      apiVersion: number;
      apiName: string;
      encode(): Promise<Encoder>;
    };
    response: { decode(raw: Buffer): Promise<Buffer>; parse(decoded: Buffer): Promise<Buffer> };
    requestTimeout?: number;
  }
  export default class ConnectionPool {
    constructor(opts: {
      host: string;
      port: number;
      logger: unknown;
      socketFactory: unknown;
      sasl?: SASLOptions;
      clientId: string;
      connectionTimeout: number;
      requestTimeout: number;
    });
    send(req: ProtocolRequest): Promise<Buffer>;
  }
}

declare module 'kafkajs/src/broker' {
  import type ConnectionPool from 'kafkajs/src/network/connectionPool';
  export default class Broker {
    constructor(opts: { connectionPool: ConnectionPool; logger: unknown });
    connect(): Promise<void>;
    disconnect(): Promise<void>;
  }
}

declare module 'kafkajs/src/network/socketFactory' {
  export default function socketFactory(): unknown;
}

declare module 'kafkajs/src/loggers' {
  export function createLogger(opts: { level: number; logCreator: () => (entry: unknown) => void }): unknown;
}

declare module 'kafkajs/src/protocol/encoder' {
  export default class Encoder {
    writeBuffer(b: Buffer): Encoder;
  }
}

declare module 'kafkajs/src/network/requestQueue' {
  export default class RequestQueue {
    pending: unknown[];
    scheduleCheckPendingRequests(): void;
  }
}
