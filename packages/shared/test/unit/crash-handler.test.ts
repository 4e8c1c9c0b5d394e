import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { createLogger, FATAL_EXIT_CODE, installCrashHandler, metrics, requestContext } from '../../src';

/** A logger whose lines are kept, parsed. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger('crash-test', { level: 'info', destination: stream }) };
}

/** vision_fatal_errors_total of one kind, summed over services. */
async function fatalCount(kind: string): Promise<number> {
  const { values } = await metrics.fatalErrors.family.get();
  return values.filter((v) => v.labels.kind === kind).reduce((n, v) => n + v.value, 0);
}

/**
 * The process-wide handler for errors nothing handled: each one is logged at fatal (with the request id
 * when the failing work belonged to a request), counted, and the process exits with status 70.
 */
describe('installCrashHandler', () => {
  let source: EventEmitter;
  let exits: number[];
  let uninstall: () => void;
  let log: ReturnType<typeof capture>;
  beforeEach(() => {
    source = new EventEmitter();
    exits = [];
    log = capture();
    uninstall = installCrashHandler(log.logger, (code) => exits.push(code), source);
  });
  afterEach(() => uninstall());

  it.each([
    ['uncaughtException', 'uncaught_exception'],
    ['unhandledRejection', 'unhandled_rejection'],
  ])('%s inside a request: logged with its request id, counted, exit 70', async (event, kind) => {
    const before = await fatalCount(kind);
    requestContext.run({ requestId: 'req-7f3a' }, () => source.emit(event, new Error('head already sent')));
    expect(exits).toEqual([FATAL_EXIT_CODE]);
    expect(FATAL_EXIT_CODE).toBe(70);
    expect(await fatalCount(kind)).toBe(before + 1);
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]).toMatchObject({
      level: 60,
      kind,
      request_id: 'req-7f3a',
      msg: 'fatal error; exiting',
      err: { message: 'head already sent' },
    });
  });

  it.each([
    ['uncaughtException', 'uncaught_exception'],
    ['unhandledRejection', 'unhandled_rejection'],
  ])('%s outside any request: logged without a request id, counted, exit 70', async (event, kind) => {
    const before = await fatalCount(kind);
    source.emit(event, new Error('timer threw'));
    expect(exits).toEqual([FATAL_EXIT_CODE]);
    expect(await fatalCount(kind)).toBe(before + 1);
    expect(log.lines[0]).toMatchObject({ level: 60, kind, err: { message: 'timer threw' } });
    expect(log.lines[0]).not.toHaveProperty('request_id');
  });

  it('exits even when logging fails', () => {
    uninstall();
    const broken = createLogger('crash-test', { level: 'info' });
    jest.spyOn(broken, 'fatal').mockImplementation(() => {
      throw new Error('log stream closed');
    });
    uninstall = installCrashHandler(broken, (code) => exits.push(code), source);
    expect(() => source.emit('uncaughtException', new Error('x'))).toThrow('log stream closed');
    expect(exits).toEqual([FATAL_EXIT_CODE]);
  });

  it('is installed once per source, and removed by the function it returns', () => {
    const second = installCrashHandler(log.logger, (code) => exits.push(code * 1000), source);
    expect(source.listenerCount('uncaughtException')).toBe(1);
    expect(source.listenerCount('unhandledRejection')).toBe(1);
    second();
    expect(source.listenerCount('uncaughtException')).toBe(1);
    uninstall();
    expect(source.listenerCount('uncaughtException')).toBe(0);
    expect(source.listenerCount('unhandledRejection')).toBe(0);
  });
});
