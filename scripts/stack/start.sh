#!/usr/bin/env bash
# Starts the installed servers on 127.0.0.1 (idempotent: a running one is left alone), waits until each is ready,
# writes its pid to run/<name>.pid and the connection settings to stack.env, in the set's state directory
# ($VISION_STACK_DIR, or its sets/node for VISION_STACK_SET=node: scripts/stack/common.sh).
# Usage: scripts/stack/start.sh [component...]   (default: postgres redis kafka s3 toxiproxy jaeger prometheus)
#   --started-file FILE   append the name of each component this call actually started (for callers that stop only those)
source "$(dirname "$0")/common.sh"

# The servers started below must not inherit the caller's descriptors: a server holding a descriptor of its
# caller's (a lock, a pipe a test waits to see closed) would keep it for as long as it runs.
for fd in $(ls /proc/$$/fd); do
  if [ "$fd" -gt 2 ] 2>/dev/null && [ "$fd" -ne 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done

STARTED_FILE=""
args=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --started-file) STARTED_FILE="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

# Is the server on PORT reachable on the pod address too (always true without one)? A server started before the
# address was asked for is restarted with it.
pod_address_served() { [ -z "$POD_ADDRESS" ] || (exec 3<>"/dev/tcp/$POD_ADDRESS/$1") 2>/dev/null; }

started() { [ -n "$STARTED_FILE" ] && echo "$1" >>"$STARTED_FILE"; log "$1 started (pid $(cat "$RUN_DIR/$1.pid"))"; }

start_postgres() {
  local dir bin data; dir="$(pg_dir)"; bin="$(pg_bin_dir)"; data="$(pg_data_dir)"
  [ -f "$data/PG_VERSION" ] && [ -x "$bin/pg_ctl" ] \
    || die "postgres $POSTGRES_VERSION is not installed (run scripts/stack/install.sh postgres)"
  if [ -f "$data/postmaster.pid" ] && kill -0 "$(head -1 "$data/postmaster.pid")" 2>/dev/null && pod_address_served "$PG_PORT"; then
    head -1 "$data/postmaster.pid" >"$RUN_DIR/postgres.pid"
    wait_for 60 postgres port_open "$PG_PORT"
    return 0
  fi
  if [ -f "$data/postmaster.pid" ] && kill -0 "$(head -1 "$data/postmaster.pid")" 2>/dev/null; then
    log "postgres runs without $POD_ADDRESS: restarting it"
    as_postgres "$bin/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null
  fi
  # Another cluster on the port (another version's, started by these scripts) is refused, not silently reused.
  ! port_open "$PG_PORT" \
    || die "port $PG_PORT is taken by another PostgreSQL, not $POSTGRES_VERSION (stop it first: scripts/stack/stop.sh postgres)"
  local opts="-p $PG_PORT"
  if [ -n "$POD_ADDRESS" ]; then
    # Pods connect from the node's network, directly attached to this address: samenet, passwords as on loopback.
    grep -q '^host all all samenet scram-sha-256$' "$data/pg_hba.conf" ||
      as_postgres sh -c "echo 'host all all samenet scram-sha-256' >>'$data/pg_hba.conf'"
    opts="$opts -c listen_addresses=127.0.0.1,$POD_ADDRESS"
  fi
  # -w: returns once the server accepts connections.
  as_postgres "$bin/pg_ctl" -D "$data" -l "$dir/postgres${STACK_SET:+-$STACK_SET}.log" -o "$opts" -w -t 60 start >/dev/null \
    || die "pg_ctl start failed (see $dir/postgres${STACK_SET:+-$STACK_SET}.log)"
  head -1 "$data/postmaster.pid" >"$RUN_DIR/postgres.pid"
  started postgres
}

start_redis() {
  if pid_alive redis && pod_address_served "$REDIS_PORT"; then return 0; fi
  if pid_alive redis; then log "redis runs without $POD_ADDRESS: restarting it"; "$STACK_SCRIPTS/stop.sh" redis; fi
  mkdir -p "$STATE_DIR/redis"
  cat >"$STATE_DIR/redis/redis.conf" <<CONF
bind 127.0.0.1${POD_ADDRESS:+ $POD_ADDRESS}
protected-mode yes
port $REDIS_PORT
daemonize yes
pidfile $RUN_DIR/redis.pid
logfile $LOG_DIR/redis.log
dir $STATE_DIR/redis
save ""
appendonly no
CONF
  rm -f "$RUN_DIR/redis.pid"
  redis-server "$STATE_DIR/redis/redis.conf" || die "redis-server failed (see $LOG_DIR/redis.log)"
  wait_for 30 redis test -s "$RUN_DIR/redis.pid"
  wait_for 30 redis sh -c "redis-cli -h 127.0.0.1 -p $REDIS_PORT ping | grep -q PONG"
  started redis
}

# Kafka (KRaft, combined broker+controller). Two client listeners: BROKER (direct, also the inter-broker one) and
# PROXIED, which advertises the toxiproxy port ($KAFKA_PORT + 3: 29095 in the first set) so that clients routed
# through toxiproxy stay behind it after the metadata request. Both take SASL/SCRAM-SHA-512 only; the controller listener takes SASL/PLAIN from the broker itself.
# The StandardAuthorizer refuses what no ACL allows; $KAFKA_ADMIN_USER is the one super user (its SCRAM credential is
# written into the KRaft storage when it is formatted).
KAFKA_PROXIED_PORT=$((KAFKA_PORT + 2))
KAFKA_TOXI_PORT=$((KAFKA_PORT + 3))
start_kafka() {
  local data="$KAFKA_DATA" conf="$STATE_DIR/kafka/server.properties"
  mkdir -p "$STATE_DIR/kafka"
  cat >"$conf.new" <<CONF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=BROKER://127.0.0.1:$KAFKA_PORT,PROXIED://127.0.0.1:$KAFKA_PROXIED_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT${POD_ADDRESS:+,PODS://$POD_ADDRESS:$KAFKA_POD_PORT}
advertised.listeners=BROKER://127.0.0.1:$KAFKA_PORT,PROXIED://127.0.0.1:$KAFKA_TOXI_PORT${POD_ADDRESS:+,PODS://$POD_ADDRESS:$KAFKA_POD_PORT}
controller.listener.names=CONTROLLER
inter.broker.listener.name=BROKER
listener.security.protocol.map=CONTROLLER:SASL_PLAINTEXT,BROKER:SASL_PLAINTEXT,PROXIED:SASL_PLAINTEXT,PODS:SASL_PLAINTEXT
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="$KAFKA_ADMIN_USER" password="$KAFKA_ADMIN_PASSWORD" user_$KAFKA_ADMIN_USER="$KAFKA_ADMIN_PASSWORD";
listener.name.broker.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$KAFKA_ADMIN_USER" password="$KAFKA_ADMIN_PASSWORD";
listener.name.proxied.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.pods.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:$KAFKA_ADMIN_USER
log.dirs=$data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
delete.topic.enable=true
log.retention.hours=24
CONF
  if pid_alive kafka; then
    # One broker at a time on these ports: a running one of another version is refused, not silently reused.
    local running; running="$(cat "$RUN_DIR/kafka.version" 2>/dev/null || echo unknown)"
    [ "$running" = "$KAFKA_VERSION" ] || [ "$running" = unknown ] \
      || die "Kafka $running is running, not $KAFKA_VERSION (stop it first: scripts/stack/stop.sh kafka)"
    if cmp -s "$conf.new" "$conf"; then rm -f "$conf.new"; return 0; fi
    # Started with another configuration (by an older version of this script: without SASL and ACLs, say).
    log "kafka runs with another configuration: restarting it with this one"
    "$STACK_SCRIPTS/stop.sh" kafka
  fi
  mv "$conf.new" "$conf"
  [ -f "$KAFKA_HOME/.complete" ] || die "kafka $KAFKA_VERSION is not installed (run KAFKA_VERSION=$KAFKA_VERSION scripts/stack/install.sh kafka)"
  # Logging: 3.x through reload4j (log4j 1 configuration), 4.x through log4j2 (scripts/stack/kafka-log4j2.properties).
  local log_opts
  if [ "$(kafka_major)" -ge 4 ]; then
    log_opts=("-Dlog4j2.configurationFile=$STACK_SCRIPTS/kafka-log4j2.properties" "-Dkafka.logs.dir=$LOG_DIR")
  else
    cat >"$STATE_DIR/kafka/log4j.properties" <<CONF
log4j.rootLogger=WARN, file
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$LOG_DIR/kafka-server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
CONF
    log_opts=("-Dlog4j.configuration=file:$STATE_DIR/kafka/log4j.properties")
  fi
  local java_opts=(-Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true "${log_opts[@]}" -cp "$KAFKA_HOME/lib/*")
  # KRaft storage, formatted once per version and admin credential (a static controller quorum:
  # controller.quorum.voters above, which the 4.x storage tool also accepts without --standalone). $data.sasl holds a
  # digest of the admin credential written into it: storage formatted without it (or with another) is formatted again.
  local sasl_mark
  sasl_mark="$(printf '%s:%s' "$KAFKA_ADMIN_USER" "$KAFKA_ADMIN_PASSWORD" | sha256sum | cut -d' ' -f1)"
  if [ -f "$data/meta.properties" ] && [ "$(cat "$data.sasl" 2>/dev/null)" != "$sasl_mark" ]; then
    log "kafka: formatting $data again (its storage has no SCRAM credential for $KAFKA_ADMIN_USER)"
    rm -rf "$data" "$data.sasl"
  fi
  if [ ! -f "$data/meta.properties" ]; then
    local cid
    cid="$(java "${java_opts[@]}" kafka.tools.StorageTool random-uuid 2>>"$LOG_DIR/kafka-format.log")"
    java "${java_opts[@]}" kafka.tools.StorageTool format -t "$cid" -c "$conf" \
      --add-scram "SCRAM-SHA-512=[name=$KAFKA_ADMIN_USER,password=$KAFKA_ADMIN_PASSWORD]" >>"$LOG_DIR/kafka-format.log" 2>&1 \
      || die "kafka storage format failed (see $LOG_DIR/kafka-format.log)"
    echo "$sasl_mark" >"$data.sasl"
  fi
  nohup setsid java "${java_opts[@]}" kafka.Kafka "$conf" >>"$LOG_DIR/kafka.out" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/kafka.pid"
  echo "$KAFKA_VERSION" >"$RUN_DIR/kafka.version"
  wait_for 90 kafka port_open "$KAFKA_PORT"
  KAFKA_SASL_USERNAME="$KAFKA_ADMIN_USER" KAFKA_SASL_PASSWORD="$KAFKA_ADMIN_PASSWORD" \
    wait_for 90 kafka node "$STACK_SCRIPTS/kafka-ready.js" "127.0.0.1:$KAFKA_PORT"
  started kafka
}

# The S3 server: SeaweedFS in one process (master, volume server, filer, S3 gateway). The access key pair from
# AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY is its admin identity; anonymous requests are refused.
start_s3() {
  if pid_alive s3 && (exec 3<>"/dev/tcp/$S3_HOST/$S3_PORT") 2>/dev/null; then return 0; fi
  if pid_alive s3; then log "s3 runs on another address than $S3_HOST: restarting it"; "$STACK_SCRIPTS/stop.sh" s3; fi
  # A MinIO server started by earlier versions of these scripts holds the same port: stop it (by its pid file).
  if pid_alive minio; then kill -TERM "$(cat "$RUN_DIR/minio.pid")"; wait_for 30 "minio to stop" bash -c "! kill -0 $(cat "$RUN_DIR/minio.pid")"; fi
  rm -f "$RUN_DIR/minio.pid"
  [ -x "$BIN_DIR/weed" ] || die "SeaweedFS is not installed (run scripts/stack/install.sh s3)"
  local b="$SEAWEEDFS_PORT_BASE"
  mkdir -p "$STATE_DIR/s3-data"
  # Every bucket is a collection that grows 7 volumes of its own. With -volume.max=0 the volume server sizes its slots
  # by the default volume size (30 GB), not the master's 256 MB limit, and refuses new buckets after a few ("No
  # writable volumes and no free volumes left"); the volumes' files only take the space their data needs. Its floor of
  # free disk is in bytes: its default, 1 % of the disk, can exceed what a busy machine with a large disk has free,
  # and below it every volume turns read-only.
  AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY" \
    nohup setsid "$BIN_DIR/weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$STATE_DIR/s3-data" \
    -master.port=$b -master.port.grpc=$((b + 1)) -volume.port=$((b + 2)) -volume.port.grpc=$((b + 3)) \
    -filer -filer.port=$((b + 4)) -filer.port.grpc=$((b + 5)) \
    -s3 -s3.ip.bind="$S3_HOST" -s3.port="$S3_PORT" -s3.port.grpc=$((b + 6)) -s3.port.iceberg=0 -s3.port.lance=0 \
    -master.volumeSizeLimitMB=256 -volume.max=400 -volume.minFreeSpace=512MiB >>"$LOG_DIR/s3.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/s3.pid"
  wait_for 90 s3 curl -fsS "http://$S3_HOST:$S3_PORT/healthz"
  started s3
}

start_toxiproxy() {
  if pid_alive toxiproxy; then return 0; fi
  [ -x "$BIN_DIR/toxiproxy-server" ] || die "toxiproxy is not installed (run scripts/stack/install.sh toxiproxy)"
  nohup setsid "$BIN_DIR/toxiproxy-server" -host 127.0.0.1 -port "$TOXIPROXY_PORT" >>"$LOG_DIR/toxiproxy.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/toxiproxy.pid"
  wait_for 30 toxiproxy curl -fsS "http://127.0.0.1:$TOXIPROXY_PORT/version"
  started toxiproxy
}

# --- observability backends ----------------------------------------------------------------------------------------
# Jaeger v2 with in-memory storage, on the configuration compose ships (deploy/compose/jaeger.yaml), its addresses
# set to the stack's: loopback only, OTLP in, the query API + UI, no self-tracing, no own metrics endpoint. With a
# pod address, jaeger-pods.yaml adds an OTLP/HTTP receiver there (same port) for the pods of a test cluster.
start_jaeger() {
  if pid_alive jaeger && pod_address_served "$JAEGER_OTLP_PORT"; then return 0; fi
  if pid_alive jaeger; then log "jaeger runs without $POD_ADDRESS: restarting it"; "$STACK_SCRIPTS/stop.sh" jaeger; fi
  [ -x "$BIN_DIR/jaeger" ] || die "jaeger is not installed (run scripts/stack/install.sh jaeger)"
  local configs=(--config "$JAEGER_CONFIG")
  [ -z "$POD_ADDRESS" ] || configs+=(--config "$STACK_SCRIPTS/jaeger-pods.yaml")
  JAEGER_LISTEN_HOST=127.0.0.1 JAEGER_OTLP_GRPC_PORT="$JAEGER_OTLP_GRPC_PORT" JAEGER_OTLP_HTTP_PORT="$JAEGER_OTLP_PORT" \
    JAEGER_QUERY_PORT="$JAEGER_QUERY_PORT" JAEGER_QUERY_GRPC_PORT="$JAEGER_QUERY_GRPC_PORT" \
    JAEGER_HEALTH_PORT="$JAEGER_HEALTH_PORT" JAEGER_POD_ADDRESS="$POD_ADDRESS" \
    nohup setsid "$BIN_DIR/jaeger" "${configs[@]}" >>"$LOG_DIR/jaeger.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/jaeger.pid"
  wait_for 60 jaeger curl -fsS "http://127.0.0.1:$JAEGER_QUERY_PORT/api/services"
  wait_for 30 jaeger port_open "$JAEGER_OTLP_PORT"
  started jaeger
}

# Prometheus ($PROMETHEUS_VERSION, built by install.sh) scraping the metrics endpoints the test deployments list in
# $STATE_DIR/prometheus/targets/*.json (file service discovery; scripts/distributed/launcher.js writes one file per
# deployment), every second.
start_prometheus() {
  if pid_alive prometheus; then return 0; fi
  [ -x "$BIN_DIR/prometheus" ] || die "prometheus is not installed (run scripts/stack/install.sh prometheus)"
  mkdir -p "$STATE_DIR/prometheus/targets" "$STATE_DIR/prometheus/data-$PROMETHEUS_VERSION"
  cat >"$STATE_DIR/prometheus/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: vision
    # The services label their series with their own service name; keep it (standalone serves six).
    honor_labels: true
    file_sd_configs:
      - files: ['$STATE_DIR/prometheus/targets/*.json']
        refresh_interval: 1s
CONF
  nohup setsid "$BIN_DIR/prometheus" --config.file="$STATE_DIR/prometheus/prometheus.yml" \
    --web.listen-address="127.0.0.1:$PROMETHEUS_PORT" --storage.tsdb.path="$STATE_DIR/prometheus/data-$PROMETHEUS_VERSION" \
    --storage.tsdb.retention.time=1d >>"$LOG_DIR/prometheus.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR/prometheus.pid"
  wait_for 60 prometheus curl -fsS "http://127.0.0.1:$PROMETHEUS_PORT/-/ready"
  started prometheus
}
# --- end observability backends -----------------------------------------------------------------------------------

for c in $(components_from_args "${args[@]+"${args[@]}"}"); do "start_$c"; done

# Written whole, then renamed: a reader (a deployment starting while the observability backends start later,
# scripts/stack/session.sh) never sees half a file.
env_file="$STATE_DIR/stack.env.$$"
cat >"$env_file" <<ENV
VISION_STACK_PG_URL=postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT
VISION_STACK_REDIS_URL=redis://127.0.0.1:$REDIS_PORT
VISION_STACK_KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT
VISION_STACK_KAFKA_ADMIN_USER=$KAFKA_ADMIN_USER
VISION_STACK_KAFKA_ADMIN_PASSWORD=$KAFKA_ADMIN_PASSWORD
VISION_STACK_KAFKA_VERSION=$(cat "$RUN_DIR/kafka.version" 2>/dev/null || echo "$KAFKA_VERSION")
VISION_STACK_KAFKA_PROXIED_UPSTREAM=127.0.0.1:$KAFKA_PROXIED_PORT
VISION_STACK_KAFKA_PROXIED_LISTEN=127.0.0.1:$KAFKA_TOXI_PORT
VISION_STACK_S3_ENDPOINT=http://$S3_HOST:$S3_PORT
VISION_STACK_S3_ACCESS_KEY=$S3_ACCESS_KEY
VISION_STACK_S3_SECRET_KEY=$S3_SECRET_KEY
VISION_STACK_TOXIPROXY_URL=http://127.0.0.1:$TOXIPROXY_PORT
VISION_STACK_DIR=$STACK_DIR
VISION_STACK_SET=$STACK_SET
ENV
# The same servers as pods of a test cluster reach them.
if [ -n "$POD_ADDRESS" ]; then
  cat >>"$env_file" <<ENV
VISION_STACK_POD_PG_URL=postgres://postgres:$PG_PASSWORD@$POD_ADDRESS:$PG_PORT
VISION_STACK_POD_REDIS_URL=redis://$POD_ADDRESS:$REDIS_PORT
VISION_STACK_POD_KAFKA_BROKERS=$POD_ADDRESS:$KAFKA_POD_PORT
VISION_STACK_POD_S3_ENDPOINT=http://$POD_ADDRESS:$S3_PORT
ENV
  ! pid_alive jaeger || echo "VISION_STACK_POD_OTLP_ENDPOINT=http://$POD_ADDRESS:$JAEGER_OTLP_PORT" >>"$env_file"
fi
# Observability backends only while they run (services would otherwise export to nothing and wait at shutdown).
if pid_alive jaeger; then
  printf 'VISION_STACK_OTLP_ENDPOINT=http://127.0.0.1:%s\nVISION_STACK_JAEGER_URL=http://127.0.0.1:%s\n' \
    "$JAEGER_OTLP_PORT" "$JAEGER_QUERY_PORT" >>"$env_file"
fi
if pid_alive prometheus; then
  printf 'VISION_STACK_PROMETHEUS_URL=http://127.0.0.1:%s\nVISION_STACK_PROMETHEUS_TARGETS=%s\n' \
    "$PROMETHEUS_PORT" "$STATE_DIR/prometheus/targets" >>"$env_file"
fi
mv -f "$env_file" "$STATE_DIR/stack.env"
