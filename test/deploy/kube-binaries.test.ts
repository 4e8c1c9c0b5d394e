/**
 * scripts/kube/install.sh and install-node.sh keep their cached binaries only while each reports the release pinned
 * in the script (scripts/kube/binary-version.sh): a missing binary, or one of another release, is built again, and a
 * current one is left alone. Run against a cache of stand-ins (shell scripts that print a version) with a stand-in
 * `go` that records what it is asked to build and writes a stand-in of the pinned release, so nothing is compiled.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './deploy-support';

/** What each binary prints for its version command, at the pinned releases of the two scripts. */
const CURRENT: Record<string, string> = {
  'kube-apiserver': 'Kubernetes v1.35.4',
  'kube-controller-manager': 'Kubernetes v1.35.4',
  'kube-scheduler': 'Kubernetes v1.35.4',
  kubelet: 'Kubernetes v1.35.4',
  'kube-proxy': 'Kubernetes v1.35.4',
  kubectl: 'Client Version: v1.35.4\nKustomize Version: v5.7.1',
  etcd: 'etcd Version: 3.5.21\nGit SHA: Not provided',
  kwok: 'kwok version v0.7.0 go1.26.8 (linux/amd64)',
  kwokctl: 'kwokctl version v0.7.0 go1.26.8 (linux/amd64)',
  containerd: 'containerd github.com/containerd/containerd/v2 v2.2.9 ',
  'containerd-shim-runc-v2': 'containerd-shim-runc-v2:\n  Version:  v2.2.9',
  ctr: 'ctr github.com/containerd/containerd/v2 v2.2.9',
  coredns: 'CoreDNS-1.14.7\nlinux/amd64, go1.26.8, v1.14.7',
  traefik: 'Version:      v3.6.12\nCodename:     cheddar',
  'kube-router': 'Running kube-router version v2.1.0, built on , go1.26.8',
  pause: 'pause.c v1.35.4',
};
const CRD_VERSION = '0.81.0';

let dir: string;
let cache: string;
let fakes: string;

const script = (file: string, body: string) => {
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
};
/** A stand-in binary that prints `text` whatever it is asked. */
const standIn = (name: string, text: string) =>
  script(path.join(cache, 'bin', name), `cat <<'OUT'\n${text}\nOUT`);
const crd = (version: string) =>
  `metadata:\n  annotations:\n    controller-gen.kubebuilder.io/version: v0.17.2\n    operator.prometheus.io/version: ${version}\n`;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'vision-kube-binaries-'));
  cache = path.join(dir, 'cache');
  fakes = path.join(dir, 'fakes');
  mkdirSync(path.join(cache, 'bin'), { recursive: true });
  mkdirSync(fakes);
  for (const [name, text] of Object.entries(CURRENT)) standIn(name, text);
  const crds = path.join(cache, 'crds');
  mkdirSync(path.join(crds, 'gateway-api'), { recursive: true });
  for (const f of ['servicemonitors', 'prometheusrules'])
    writeFileSync(path.join(crds, `monitoring.coreos.com_${f}.yaml`), crd(CRD_VERSION));
  writeFileSync(path.join(crds, 'gateway-api/.complete'), 'v1.4.0\n');
  // The node's module trees, already copied out (install-node.sh downloads them only when missing).
  for (const m of [
    'github.com_containerd_containerd_v2@v2.2.9',
    'github.com_coredns_coredns@v1.14.7',
    'github.com_cloudnativelabs_kube-router_v2@v2.1.0',
  ]) {
    mkdirSync(path.join(cache, 'src', m), { recursive: true });
    writeFileSync(path.join(cache, 'src', m, 'go.mod'), 'module x\n');
  }
  // The module the CRDs come from, as `go mod download -json` names it.
  const module = path.join(dir, 'module');
  mkdirSync(path.join(module, 'example/prometheus-operator-crd'), { recursive: true });
  for (const f of ['servicemonitors', 'prometheusrules'])
    writeFileSync(
      path.join(module, `example/prometheus-operator-crd/monitoring.coreos.com_${f}.yaml`),
      crd(CRD_VERSION),
    );
  // `go`: logs its arguments; `build -o OUT` and `install PKG@V` write a stand-in of the pinned release, `mod download`
  // names the module above. The Debian packages of install-node.sh count as installed.
  writeFileSync(path.join(fakes, 'current.json'), JSON.stringify(CURRENT));
  script(
    path.join(fakes, 'go'),
    `echo "$*" >> "${dir}/go.log"
case "$1" in
  mod) echo '  "Dir": "${module}",' ;;
  build|install)
    out=""; prev=""
    for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
    if [ "$1" = install ]; then for a in "$@"; do last="$a"; done; name="\${last%@*}"; out="$GOBIN/\${name##*/}"; fi
    name="$(basename "$out" .tmp)"
    node -e 'const c=require(process.argv[1]);process.stdout.write("#!/bin/sh\\ncat <<'"'"'OUT'"'"'\\n"+c[process.argv[2]]+"\\nOUT\\n")' "${fakes}/current.json" "$name" > "$out"
    chmod +x "$out" ;;
esac`,
  );
  script(path.join(fakes, 'dpkg'), 'exit 0');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function install(name: 'install.sh' | 'install-node.sh') {
  const r = spawnSync('bash', [path.join(repoRoot, 'scripts/kube', name)], {
    env: { ...process.env, VISION_KUBE_DIR: cache, PATH: `${fakes}:${process.env.PATH}` },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const log = path.join(dir, 'go.log');
  return {
    status: r.status,
    stdout: r.stdout.trim(),
    stderr: r.stderr,
    go: existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [],
  };
}
const reports = (name: string) =>
  spawnSync(path.join(cache, 'bin', name), ['--version'], { encoding: 'utf8' }).stdout.trim();

describe('scripts/kube/install.sh', () => {
  test('leaves a cache of the pinned releases alone: no go command, the bin directory printed', () => {
    expect(install('install.sh')).toEqual({ status: 0, stdout: path.join(cache, 'bin'), stderr: '', go: [] });
  });

  test('builds again a binary of another release, a missing one, and fetches CRDs of another release', () => {
    standIn('kube-apiserver', 'Kubernetes v1.34.2');
    standIn('kubectl', 'Client Version: v1.35.40');
    rmSync(path.join(cache, 'bin/etcd'));
    standIn('kwokctl', 'kwokctl version v0.6.1 go1.24.1 (linux/amd64)');
    writeFileSync(path.join(cache, 'crds/monitoring.coreos.com_prometheusrules.yaml'), crd('0.79.0'));
    const r = install('install.sh');
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    const built = r.go.filter((l) => /^(build|install) /.test(l)).map((l) => l.split(' ').pop());
    expect(built).toEqual([
      'k8s.io/kubernetes/cmd/kube-apiserver',
      'k8s.io/kubernetes/cmd/kubectl',
      '.',
      'sigs.k8s.io/kwok/cmd/kwokctl@v0.7.0',
    ]);
    expect(r.go.filter((l) => l.startsWith('mod download'))).toEqual([
      'mod download -json github.com/prometheus-operator/prometheus-operator@v0.81.0',
    ]);
    expect(reports('kube-apiserver')).toBe('Kubernetes v1.35.4');
    expect(reports('etcd')).toContain('3.5.21');
    expect(
      readFileSync(path.join(cache, 'crds/monitoring.coreos.com_prometheusrules.yaml'), 'utf8'),
    ).toContain(`operator.prometheus.io/version: ${CRD_VERSION}`);
    // Now current: the next run builds nothing.
    rmSync(path.join(dir, 'go.log'));
    expect(install('install.sh').go).toEqual([]);
  });

  test('a build that still reports another release fails, naming it, instead of building at every run', () => {
    standIn('kube-scheduler', 'Kubernetes v1.34.2');
    writeFileSync(
      path.join(fakes, 'current.json'),
      JSON.stringify({ ...CURRENT, 'kube-scheduler': 'Kubernetes v1.34.2' }),
    );
    const r = install('install.sh');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `${path.join(cache, 'bin/kube-scheduler')} does not report v1.35.4 after its build`,
    );
  });
});

describe('scripts/kube/install-node.sh', () => {
  test('leaves a cache of the pinned releases alone', () => {
    expect(install('install-node.sh')).toEqual({
      status: 0,
      stdout: path.join(cache, 'bin'),
      stderr: '',
      go: [],
    });
  });

  test('builds again only the binaries of another release', () => {
    standIn('coredns', 'CoreDNS-1.11.1\nlinux/amd64, go1.22.0, v1.11.1');
    standIn('containerd-shim-runc-v2', 'containerd-shim-runc-v2:\n  Version:  v2.1.0');
    const r = install('install-node.sh');
    expect(r.status).toBe(0);
    expect(r.go.filter((l) => l.startsWith('build ')).map((l) => l.split(' ').pop())).toEqual([
      './cmd/containerd-shim-runc-v2',
      '.',
    ]);
    expect(reports('coredns')).toContain('CoreDNS-1.14.7');
  });
});
