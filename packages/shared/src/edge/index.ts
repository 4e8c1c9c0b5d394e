/**
 * The HTTP edge of every service: the Express app with request ids, identity checks and error answers
 * (http.ts), the server and its draining (server.ts), the guards a request passes before its handler
 * (request-shape.ts, strict-body.ts, unparsable-request.ts), multipart uploads (multipart.ts), answering
 * before the body has arrived (early-answer.ts), waiting for a turn of admission (in-turn.ts), a slow
 * reader's drain (stall.ts), and the crash handler with the request a piece of work belongs to (crash-handler.ts).
 */
export * from './http';
export * from './server';
export * from './early-answer';
export * from './crash-handler';
export * from './in-turn';
export * from './request-shape';
export * from './strict-body';
export * from './stall';
export * from './unparsable-request';
export * from './multipart';
