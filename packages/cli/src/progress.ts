import { SingleBar } from 'cli-progress';
import type { Task, UploadProgress } from '@vision/sdk';

/**
 * Progress on stderr: an animated bar and spinner when stdout and stderr are terminals, else plain
 * lines (one per 10 % of an upload, one per status change), so logs and pipes stay readable.
 */
export interface Progress {
  upload(p: UploadProgress): void;
  uploadDone(): void;
  status(task: Task): void;
  done(): void;
}

const MB = 1024 * 1024;
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function createProgress(
  interactive = Boolean(process.stdout.isTTY && process.stderr.isTTY),
): Progress {
  return interactive ? terminalProgress() : lineProgress();
}

function lineProgress(): Progress {
  let lastStep = -1;
  let lastStatus = '';
  const say = (line: string) => process.stderr.write(`${line}\n`);
  return {
    upload({ loaded, total, percent }) {
      if (percent === undefined || total === undefined) return;
      const step = Math.floor(percent / 10);
      if (step === lastStep) return;
      lastStep = step;
      say(`upload ${percent}% (${(loaded / MB).toFixed(1)}/${(total / MB).toFixed(1)} MiB)`);
    },
    uploadDone() {
      lastStep = -1;
    },
    status(task) {
      if (task.status === lastStatus) return;
      lastStatus = task.status;
      say(`task ${task.task_id} ${task.status}`);
    },
    done() {},
  };
}

function terminalProgress(): Progress {
  let bar: SingleBar | undefined;
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  let line = '';
  const draw = () => process.stderr.write(`\r\x1b[2K${SPINNER[frame++ % SPINNER.length]} ${line}`);
  return {
    upload({ loaded, total }) {
      if (total === undefined) return;
      if (!bar) {
        bar = new SingleBar({
          stream: process.stderr,
          format: 'upload [{bar}] {percentage}% | {value}/{total} bytes | ETA {eta_formatted}',
          barCompleteChar: '\u2588',
          barIncompleteChar: '\u2591',
          hideCursor: true,
        });
        bar.start(total, 0);
      }
      bar.update(loaded);
    },
    uploadDone() {
      bar?.stop();
      bar = undefined;
    },
    status(task) {
      line = `task ${task.task_id} ${task.status}`;
      if (!timer) timer = setInterval(draw, 100);
      draw();
    },
    done() {
      if (timer) clearInterval(timer);
      timer = undefined;
      if (line) process.stderr.write(`\r\x1b[2K✔ ${line}\n`);
      line = '';
    },
  };
}
