#!/usr/bin/env bash
# The first phase of `npm test`: installs what the suites need, idempotently, and caches what it builds under
# ~/.cache (a second run takes seconds). Needs root for apt-get (or sudo), Go (/usr/local/go or on PATH) and Java
# with Maven; everything else comes from Debian, the Go module proxy, Maven Central, PyPI and the npm registry.
#   ffmpeg, Debian's chromium (test/browser; never a downloaded browser), slowhttptest, Python's requests and
#   pycocotools (test/transport, test/scripts/fire-metrics), the live stream servers (scripts/stack/live),
#   the service image (scripts/image/build.sh: test/deploy/image.test.ts and the container mode of the distributed
#   suite).
# SeaweedFS (the distributed suite's S3 server, needed when it starts), Jaeger and Prometheus with promtool (read by
# the distributed files that run last, and the alert rules beside them), helm and the kwok cluster's binaries (the
# chart's tests beside the distributed suite) are compiled in the background, in that order, from here on (SeaweedFS
# at nice 10, the others at the lowest priority); whoever needs one first waits for its build (their build locks: scripts/stack/install.sh,
# scripts/ensure-helm.sh, scripts/kube/install.sh, scripts/kube/install-node.sh: the real node's containerd, CoreDNS,
# Traefik and kube-router).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_get() { # <package>...: installs the packages that are missing
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "[test-setup] apt-get install ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

go version >/dev/null 2>&1 || { echo "Go is required (helm, kube, SeaweedFS, Jaeger, Prometheus and toxiproxy build from source)" >&2; exit 1; }
command -v java >/dev/null && command -v mvn >/dev/null \
  || { echo "Java and Maven are required (Kafka's jars come from Maven Central)" >&2; exit 1; }

apt_get ffmpeg chromium slowhttptest
# After apt-get: the stack's installer checks ffmpeg too, and two apt-gets at once would fight for dpkg's lock.
mkdir -p "$HOME/.cache/vision-stack" "$HOME/.cache/vision-kube"
# One after the other, in the order they are needed. SeaweedFS, which the distributed suite needs when it starts,
# builds at the priority the stack's builds take (nice 10); the rest, needed later, at the lowest.
# A build that took a while goes into npm test's phase table (VISION_CI_PHASES) as a phase beside the others: its
# time, and in place of the machine's busy share the CPU it used itself, as a share of the machine's cores.
built() { # <name> <log> <command...>
  local name="$1" log="$2" wall user sys TIMEFORMAT='%R %U %S'
  shift 2
  read -r wall user sys < <({ time "$@" >>"$log" 2>&1; } 2>&1)
  if [ -n "${VISION_CI_PHASES:-}" ] && [ "${wall%.*}" -ge 10 ]; then
    printf 'background build: %s (its own CPU)\t%s\t0\t1\t%s\n' "$name" "${wall%.*}" \
      "$(awk -v w="$wall" -v u="$user" -v s="$sys" -v n="$(nproc)" 'BEGIN { printf "%d", 100 * (u + s) / w / n }')" \
      >>"$VISION_CI_PHASES"
  fi
}
stack_log="$HOME/.cache/vision-stack/background-build.log" kube_log="$HOME/.cache/vision-kube/background-build.log"
: >"$stack_log"
: >"$kube_log"
{
  set +e # one build failing leaves the next to build; whoever needs the failed one builds it again, in the open
  built SeaweedFS "$stack_log" bash scripts/stack/install.sh s3
  built "Jaeger, Prometheus" "$stack_log" nice -n 19 bash scripts/stack/install.sh jaeger prometheus
  built helm "$kube_log" nice -n 19 bash scripts/ensure-helm.sh
  built "the kwok cluster's binaries" "$kube_log" nice -n 19 bash scripts/kube/install.sh
  built "the node's binaries" "$kube_log" nice -n 19 bash scripts/kube/install-node.sh
} &
ffmpeg -version | head -1
/usr/bin/chromium --version 2>/dev/null
bash scripts/stack/live/install.sh
python3 -c 'import requests, pycocotools.cocoeval' 2>/dev/null || python3 -m pip install --quiet requests pycocotools
python3 -c 'import requests, pycocotools.cocoeval'

[ -f ../shared/models/yolox_nano.onnx ] || [ -f "${VISION_SHARED_DIR:-/nonexistent}/models/yolox_nano.onnx" ] \
  || { echo "the test data is missing: ../shared/models/yolox_nano.onnx (or VISION_SHARED_DIR)" >&2; exit 1; }

bash scripts/image/build.sh >/dev/null
echo "[test-setup] ready" >&2
