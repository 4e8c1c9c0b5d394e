/**
 * An onnxruntime session in a worker thread. onnxruntime-node runs `session.run` synchronously on the
 * calling thread (its async `run` only defers the call with setImmediate), so a session on the main
 * thread stops the event loop for every model run: no request is read, no image decoded (sharp is
 * scheduled from the loop), no frame published while the model works. In a worker the loop stays free
 * and decoding overlaps the model (docs/PERFORMANCE.md, "Session settings").
 *
 * Runs are queued in the worker and execute one at a time, each with the session's intra-op threads.
 * Inputs are copied to the worker (callers may reuse their arrays), or lent: moved to the worker without a
 * copy and handed back with the result (a 2 MB copy cost about 1.1 ms of main-thread time per run).
 * Outputs are transferred back, into a buffer the caller sends along when it has one (`into`).
 */
import { Worker } from 'node:worker_threads';
import type { InferenceSession } from 'onnxruntime-node';

/** The worker's code: plain JavaScript run with `eval` so that it needs no build step (jest runs sources). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const ort = require(workerData.ortPath);
const describe = (s) => ({
  inputNames: s.inputNames,
  outputNames: s.outputNames,
  inputShape: s.inputMetadata && s.inputMetadata[0] && s.inputMetadata[0].isTensor ? s.inputMetadata[0].shape : null,
});
ort.InferenceSession.create(workerData.file, workerData.options).then(
  (session) => {
    parentPort.postMessage({ kind: 'ready', info: describe(session) });
    const handle = async (m) => {
      if (m.kind === 'close') {
        await session.release();
        parentPort.postMessage({ kind: 'closed' });
        return;
      }
      try {
        const input = new ort.Tensor('float32', m.data, m.dims);
        const out = (await session.run({ [m.input]: input }))[m.output];
        // The output goes back in the caller's buffer when it sent one of the right size: the main thread then
        // gets no new 1 MB ArrayBuffer per run (their churn made its garbage collector run again and again).
        const data = m.into && m.into.length === out.data.length ? (m.into.set(out.data), m.into) : out.data;
        const lent = m.lent ? m.data : undefined;
        parentPort.postMessage({ kind: 'result', id: m.id, data, dims: out.dims, lent }, lent ? [data.buffer, lent.buffer] : [data.buffer]);
      } catch (err) {
        parentPort.postMessage({ kind: 'result', id: m.id, error: String((err && err.message) || err) });
      }
    };
    // One message at a time, in order: runs never overlap, and close comes after the runs before it.
    let chain = Promise.resolve();
    parentPort.on('message', (m) => {
      chain = chain.then(() => handle(m));
    });
  },
  (err) => parentPort.postMessage({ kind: 'failed', error: String((err && err.message) || err) }),
);
`;

export interface SessionInfo {
  inputNames: readonly string[];
  outputNames: readonly string[];
  /** Declared shape of the first input, when it is a tensor. */
  inputShape: ReadonlyArray<number | string> | null;
}

export interface RawOutput {
  data: Float32Array;
  dims: readonly number[];
  /** A lent input, handed back (the caller's array was detached when it was lent). */
  lent?: Float32Array;
}

type FromWorker =
  | { kind: 'ready'; info: SessionInfo }
  | { kind: 'failed'; error: string }
  | { kind: 'closed' }
  | { kind: 'result'; id: number; data?: Float32Array; dims?: number[]; lent?: Float32Array; error?: string };

interface Pending {
  resolve: (out: RawOutput) => void;
  reject: (err: Error) => void;
}

export class SessionWorker {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private closed?: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    readonly info: SessionInfo,
  ) {
    worker.on('message', (m: FromWorker) => {
      if (m.kind !== 'result') return;
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (!p) return;
      if (m.error !== undefined || !m.data || !m.dims) p.reject(new Error(`model run failed: ${m.error}`));
      else p.resolve({ data: m.data, dims: m.dims, ...(m.lent ? { lent: m.lent } : {}) });
    });
    const failAll = (err: Error) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', failAll);
    worker.on('exit', () => failAll(new Error('model worker exited')));
  }

  static start(file: string, options: InferenceSession.SessionOptions): Promise<SessionWorker> {
    const ortPath = require.resolve('onnxruntime-node');
    const worker = new Worker(WORKER_SOURCE, {
      name: 'model-session',
      eval: true,
      workerData: { ortPath, file, options },
    });
    return new Promise((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`model worker exited with ${code}`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (m: FromWorker) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if (m.kind === 'ready') resolve(new SessionWorker(worker, m.info));
        else {
          void worker.terminate();
          reject(new Error(m.kind === 'failed' ? m.error : 'model worker did not start'));
        }
      });
    });
  }

  /**
   * Runs the model on one input tensor; resolves with the named output. `data` is copied before this
   * returns, or, with `lend` (and an array that spans its whole buffer), moved to the worker: the caller's
   * array is then empty (detached) and the same memory comes back as the result's `lent`. `into` (an array
   * that spans its buffer) is moved to the worker and comes back as the result's `data` when its length is
   * the output's; otherwise the output comes in a new array and `into` is dropped.
   */
  run(
    input: string,
    output: string,
    data: Float32Array,
    dims: readonly number[],
    lend = false,
    into?: Float32Array,
  ): Promise<RawOutput> {
    if (this.closed) return Promise.reject(new Error('model is closed'));
    const id = this.nextId++;
    const moved = lend && spansBuffer(data);
    const out = into && spansBuffer(into) ? into : undefined;
    const transfer = [
      ...(moved ? [data.buffer as ArrayBuffer] : []),
      ...(out ? [out.buffer as ArrayBuffer] : []),
    ];
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage(
        { kind: 'run', id, input, output, data, dims, lent: moved, into: out },
        transfer,
      );
    });
  }

  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => {
      const done = () => void this.worker.terminate().then(() => resolve());
      this.worker.once('exit', () => resolve());
      this.worker.on('message', (m: FromWorker) => {
        if (m.kind === 'closed') done();
      });
      this.worker.postMessage({ kind: 'close' });
      setTimeout(done, 5000).unref();
    });
    return this.closed;
  }
}

/** Whether `a` views its whole buffer (only then can the buffer be moved to a worker). */
function spansBuffer(a: Float32Array): boolean {
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength;
}
