import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

export interface LocalRegistry {
  /** Base URL for npm's `--registry`, e.g. http://127.0.0.1:1234/ */
  url: string;
  close(): Promise<void>;
}

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
}

interface Packed {
  manifest: Manifest;
  file: string;
  integrity: string;
  shasum: string;
}

const readManifest = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as Manifest;

/** Where Node would find `name` from `fromDir`: the nearest node_modules/<name> up to `root`. */
function installedDir(name: string, fromDir: string, root: string): string {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === root || dir === path.dirname(dir))
      throw new Error(`${name} is not installed from ${fromDir}`);
  }
}

/** The installed folders of `pkgDir`'s runtime dependencies, transitively, one per name. */
function dependencyClosure(pkgDir: string, root: string): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (dir: string) => {
    for (const name of Object.keys(readManifest(dir).dependencies ?? {})) {
      if (found.has(name)) continue;
      const at = installedDir(name, dir, root);
      found.set(name, at);
      visit(at);
    }
  };
  visit(pkgDir);
  return found;
}

/**
 * An npm registry on loopback that serves the SDK's runtime dependencies as the workspace has them installed
 * (each packed with `npm pack`), so a consumer's `npm install` of the packed SDK resolves its declared ranges
 * without the network or the caller's npm cache. A dependency the SDK does not declare is not served.
 */
export async function startLocalRegistry(
  sdkDir: string,
  root: string,
  workDir: string,
  env: NodeJS.ProcessEnv,
): Promise<LocalRegistry> {
  const dirs = [...dependencyClosure(sdkDir, root).values()];
  const { stdout } = await promisify(execFile)(
    'npm',
    ['pack', ...dirs, '--json', '--ignore-scripts', '--pack-destination', workDir],
    { cwd: workDir, env, encoding: 'utf8' },
  );
  const packs = JSON.parse(stdout) as { filename: string; integrity: string; shasum: string }[];
  const byName = new Map<string, Packed>(
    packs.map((p, i) => {
      const manifest = readManifest(dirs[i]);
      return [manifest.name, { manifest, file: p.filename, integrity: p.integrity, shasum: p.shasum }];
    }),
  );

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://registry');
    const tarball = /^\/-\/tarballs\/([^/]+)$/.exec(url.pathname);
    if (tarball) {
      const packed = [...byName.values()].find((p) => p.file === decodeURIComponent(tarball[1]));
      if (!packed) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void res.end(readFileSync(path.join(workDir, packed.file)));
    }
    const packed = byName.get(decodeURIComponent(url.pathname.slice(1)));
    if (!packed) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    const { manifest } = packed;
    const base = `http://${req.headers.host ?? 'registry'}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        name: manifest.name,
        'dist-tags': { latest: manifest.version },
        versions: {
          [manifest.version]: {
            ...manifest,
            _id: `${manifest.name}@${manifest.version}`,
            dist: {
              tarball: `${base}/-/tarballs/${encodeURIComponent(packed.file)}`,
              integrity: packed.integrity,
              shasum: packed.shasum,
            },
          },
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
