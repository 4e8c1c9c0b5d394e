/**
 * Set-up of the `unit` jest project: a unit test exercises pure code, so opening a socket, listening on a port or
 * starting a process is a mistake (the test belongs in the service project, `<package>/test/` outside `unit/`). While
 * each unit test file runs, those calls throw; they are restored after the file, since jest reuses its workers for the
 * other projects.
 */
import childProcess from 'node:child_process';
import net from 'node:net';

const message = (what: string): string =>
  `unit tests are pure: ${what} is not allowed here; move the test out of test/unit/ into the service project`;

beforeAll(() => {
  jest.spyOn(net.Socket.prototype, 'connect').mockImplementation(() => {
    throw new Error(message('opening a socket'));
  });
  jest.spyOn(net.Server.prototype, 'listen').mockImplementation(() => {
    throw new Error(message('listening on a port'));
  });
  for (const name of [
    'spawn',
    'spawnSync',
    'exec',
    'execSync',
    'execFile',
    'execFileSync',
    'fork',
  ] as const) {
    jest.spyOn(childProcess, name).mockImplementation(() => {
      throw new Error(message(`child_process.${name}`));
    });
  }
});

afterAll(() => {
  jest.restoreAllMocks();
});
