{{/* Chart name, fullname and labels. */}}
{{- define "vision.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vision.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "vision.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vision.labels" -}}
helm.sh/chart: {{ include "vision.chart" . }}
app.kubernetes.io/name: {{ include "vision.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: vision
{{- end -}}

{{/* Selector labels of every pod of this release. */}}
{{- define "vision.instanceSelector" -}}
app.kubernetes.io/name: {{ include "vision.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "tasks"). */}}
{{- define "vision.selectorLabels" -}}
{{ include "vision.instanceSelector" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "vision.componentName" -}}
{{- printf "%s-%s" (include "vision.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vision.image" -}}
{{- $img := .Values.image -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $img.repository $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) -}}
{{- end -}}
{{- end -}}

{{/*
A component's image: its own tag or digest (services.<component>.image) of image.repository when set (an upgrade of one
component's image rolls that component alone), else the release's. Called with (dict "root" $ "svc" $svc).
*/}}
{{- define "vision.componentImage" -}}
{{- $own := .svc.image | default dict -}}
{{- if $own.digest -}}
{{- printf "%s@%s" .root.Values.image.repository $own.digest -}}
{{- else if $own.tag -}}
{{- printf "%s:%s" .root.Values.image.repository $own.tag -}}
{{- else -}}
{{- include "vision.image" .root -}}
{{- end -}}
{{- end -}}

{{- define "vision.secretName" -}}
{{- default (printf "%s-secrets" (include "vision.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "vision.configMapName" -}}
{{- printf "%s-config" (include "vision.fullname" .) -}}
{{- end -}}

{{- define "vision.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "vision.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The components and what they need. These are facts of the code, not settings:
  port/portVar  the port each service listens on and the variable that sets it
  secrets       Secret keys the component reads (required); optionalSecrets may be absent. Each reaches
                the pod as a file of the mounted Secret, named by <KEY>_FILE (vision.secretFiles)
  callers       components allowed to reach it (NetworkPolicy) and whose public keys it mounts: the issuers of
                its routes in the identity route table (vision.callersOf)
  public        serves the public API: reached from networkPolicy.gatewayFrom (the Gateway's proxies)
  grantKeys     public keys it holds besides its callers': results checks tasks' job grants (job-grant.ts)
  opensStreams  opens caller-given stream URLs (ffprobe/ffmpeg): egress to DNS, this release's pods, its backends,
                public addresses and networkPolicy.streamEgress.extraEgress
  egressLimited every other component's egress is limited too (networkPolicy.streamEgress): DNS, its backends, and
                this release's pods (releaseEgress) or only the services it calls (the components whose callers
                name its program, each on its port)
  webhooks      also public addresses and networkPolicy.streamEgress.extraWebhookEgress: it delivers webhooks to the
                URLs callers register
  backends      the servers of external.* it connects to (networkPolicy.streamEgress.backends)
  models        mounts the models volume
  runsJobs      runs video jobs, shared by its replicas through its database schema: each pod advertises its own
                address (INFERENCE_REPLICA_URL, from the pod IP), the calls for a job reach its owner pod through
                any other (NetworkPolicy: its own pods on its port), and a stopping pod hands its jobs over
                (shutdown.handoverSeconds more grace)
  values        the key under .Values.services
  program       the service directory whose dist/main.js the container runs
inference-detect is the same inference service, serving only the stateless batch image detection for
images: it runs no video job (INFERENCE_JOB_STORE=memory) and has no database login. The job-running
"inference" Deployment scales too: its pods share the video jobs (docs/OPERATIONS.md, "Scaling video jobs").
*/}}
{{- define "vision.components" -}}
gateway:
  values: gateway
  program: gateway
  port: 8080
  portVar: PORT
  secrets: [DATABASE_URL, REDIS_URL]
  optionalSecrets: [VISION_API_KEYS]
  callers: []
  public: true
  # The public face reaches only DNS, this release's pods and these servers (its NetworkPolicy egress).
  egressLimited: true
  releaseEgress: true
  backends: [otlp, postgres, redis]
tasks:
  values: tasks
  program: tasks
  port: 8101
  portVar: TASKS_PORT
  secrets: [DATABASE_URL, S3_ACCESS_KEY, S3_SECRET_KEY]
  optionalSecrets: [TASKS_ADMIN_TOKEN, TASKS_STREAM_URL_KEY]
  callers: {{ include "vision.callersOf" (dict "root" . "service" "tasks") }}
  opensStreams: true
  backends: [kafka, otlp, postgres, s3]
quota:
  values: quota
  program: quota
  port: 8102
  portVar: QUOTA_PORT
  secrets: [DATABASE_URL]
  optionalSecrets: []
  callers: {{ include "vision.callersOf" (dict "root" . "service" "quota") }}
  egressLimited: true
  backends: [kafka, otlp, postgres]
results:
  values: results
  program: results
  port: 8103
  portVar: RESULTS_PORT
  # The pictures of events and best shots (docs/EVIDENCE.md) are kept in the object store.
  secrets: [DATABASE_URL, S3_ACCESS_KEY, S3_SECRET_KEY]
  optionalSecrets: [RESULTS_CURSOR_SECRET, RESULTS_WEBHOOK_SECRET_KEY]
  callers: {{ include "vision.callersOf" (dict "root" . "service" "results") }}
  grantKeys: [tasks]
  egressLimited: true
  webhooks: true
  backends: [kafka, otlp, postgres, s3]
images:
  values: images
  program: images
  port: 8104
  portVar: IMAGES_PORT
  secrets: [DATABASE_URL, S3_ACCESS_KEY, S3_SECRET_KEY]
  optionalSecrets: []
  callers: {{ include "vision.callersOf" (dict "root" . "service" "images") }}
  egressLimited: true
  backends: [kafka, otlp, postgres, s3]
inference:
  values: inference
  program: inference
  port: 8105
  portVar: INFERENCE_PORT
  # Video jobs on uploads stat the object and hand ffmpeg a presigned URL; the object store client
  # is required in distributed mode (ffmpeg itself runs with an empty environment). DATABASE_URL: its own
  # login, to the schema of the shared video jobs.
  secrets: [DATABASE_URL, S3_ACCESS_KEY, S3_SECRET_KEY]
  optionalSecrets: []
  callers: {{ include "vision.callersOf" (dict "root" . "service" "inference" "prefix" (ternary "/internal/v1/jobs" "" .Values.services.inferenceDetect.enabled)) }}
  models: true
  runsJobs: true
  opensStreams: true
  backends: [kafka, otlp, postgres, s3]
{{- if .Values.services.inferenceDetect.enabled }}
inference-detect:
  values: inferenceDetect
  program: inference
  port: 8105
  portVar: INFERENCE_PORT
  secrets: [S3_ACCESS_KEY, S3_SECRET_KEY]
  optionalSecrets: []
  callers: {{ include "vision.callersOf" (dict "root" . "service" "inference" "prefix" "/internal/v1/detect") }}
  models: true
  egressLimited: true
  backends: [kafka, otlp, s3]
{{- end }}
{{- end -}}

{{/*
A component's pod affinity: the values' affinity (node affinity, pod affinity), and a podAntiAffinity term of the chart
(podAntiAffinity.type soft or hard) whose label selector is this component's pods of this release only, so that
replicas of one component keep apart while different components may share a node. A podAntiAffinity in affinity would
apply one selector to every component: the render stops, naming podAntiAffinity. Input: dict "root" "component".
*/}}
{{- define "vision.affinity" -}}
{{- $v := .root.Values -}}
{{- $out := deepCopy ($v.affinity | default dict) -}}
{{- if hasKey $out "podAntiAffinity" -}}
{{- fail "affinity.podAntiAffinity would give every component one label selector: set podAntiAffinity.type (soft or hard) and podAntiAffinity.topologyKey instead, which the chart applies to each component's own pods (docs/KUBERNETES.md, \"Spreading the pods\")" -}}
{{- end -}}
{{- $a := $v.podAntiAffinity | default dict -}}
{{- if $a.type -}}
{{- $term := dict "topologyKey" $a.topologyKey "labelSelector" (dict "matchLabels" (include "vision.selectorLabels" . | fromYaml)) -}}
{{- if eq $a.type "hard" -}}
{{- $_ := set $out "podAntiAffinity" (dict "requiredDuringSchedulingIgnoredDuringExecution" (list $term)) -}}
{{- else -}}
{{- $_ := set $out "podAntiAffinity" (dict "preferredDuringSchedulingIgnoredDuringExecution" (list (dict "weight" 100 "podAffinityTerm" $term))) -}}
{{- end -}}
{{- end -}}
{{- $out | toYaml -}}
{{- end -}}

{{/* URL of a component's Service inside the cluster. */}}
{{- define "vision.url" -}}
{{- $c := index (include "vision.components" .root | fromYaml) .component -}}
{{- printf "http://%s:%v" (include "vision.componentName" .) $c.port -}}
{{- end -}}

{{- define "vision.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
fsGroup: {{ .Values.securityContext.runAsGroup }}
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "vision.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.securityContext.runAsUser }}
runAsGroup: {{ .Values.securityContext.runAsGroup }}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
privileged: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The services that call others, each with an identity key pair (IDENTITY_ISSUERS in packages/shared/src/identity/identity.ts). */}}
{{- define "vision.identityIssuers" -}}
{{- (.Files.Get "files/identity-routes.yaml" | fromYaml).issuers | toJson -}}
{{- end -}}

{{/*
The issuers whose identity opens some route of a service: the component's callers (NetworkPolicy ingress, public
keys mounted). From files/identity-routes.yaml, the route table of packages/shared/src/identity/identity-routes.ts written
by scripts/identity-routes-file.js. Input: dict "root" (the chart's root context) "service" (the program) and an
optional "prefix": only the routes whose path starts with it (one of a split service's deployments).
*/}}
{{- define "vision.callersOf" -}}
{{- $routes := (.root.Files.Get "files/identity-routes.yaml" | fromYaml).routes -}}
{{- $callers := list -}}
{{- range $routes -}}
{{- if and (eq .service $.service) (hasPrefix ($.prefix | default "") .path) -}}
{{- $callers = concat $callers .issuers -}}
{{- end -}}
{{- end -}}
{{- $callers | uniq | toJson -}}
{{- end -}}

{{- define "vision.identitySecretName" -}}
{{- default (printf "%s-identity" (include "vision.fullname" .)) .Values.secrets.existingIdentitySecret -}}
{{- end -}}

{{/*
The identity keys a component's pod mounts (docs/SECURITY.md): its own Ed25519 private key when its program
calls other services (gateway, tasks, images, results), the public keys of its callers, and those it checks job
grants with (grantKeys), nothing else.
Input: dict "root" (the chart's root context) "name" (program) "callers" (list) "grantKeys" (list).
*/}}
{{- define "vision.identityItems" -}}
{{- if has .name (include "vision.identityIssuers" .root | fromYamlArray) }}
- key: {{ .name }}.key
  path: {{ .name }}.key
{{- end }}
{{- range .callers }}
- key: {{ . }}.pub
  path: {{ . }}.pub
{{- end }}
{{- range .grantKeys }}
{{- if not (has . $.callers) }}
- key: {{ . }}.pub
  path: {{ . }}.pub
{{- end }}
{{- end }}
{{- end -}}


{{/* Where each pod mounts its keys of the release's Secret (or secrets.existingSecret). */}}
{{- define "vision.secretsDir" -}}
/var/run/vision/secrets
{{- end -}}

{{/* Where the migration Job's bus container mounts the brokers' super user (external.kafka.sasl.superUser). */}}
{{- define "vision.kafkaAdminDir" -}}
/var/run/vision/kafka-admin
{{- end -}}

{{/*
The optional keys the Secret holds: those the chart's own Secret is given, or, with secrets.existingSecret,
those listed in secrets.existingSecretOptionalKeys (a file named by <KEY>_FILE must exist).
*/}}
{{- define "vision.optionalSecretKeys" -}}
{{- $s := .Values.secrets -}}
{{- if $s.existingSecret -}}
{{- $s.existingSecretOptionalKeys | default list | toYaml -}}
{{- else -}}
{{- $keys := list "TASKS_ADMIN_TOKEN" -}}
{{- if $s.apiKeys }}{{ $keys = append $keys "VISION_API_KEYS" }}{{ end -}}
{{- if $s.resultsCursorSecret }}{{ $keys = append $keys "RESULTS_CURSOR_SECRET" }}{{ end -}}
{{- if $s.resultsWebhookSecretKey }}{{ $keys = append $keys "RESULTS_WEBHOOK_SECRET_KEY" }}{{ end -}}
{{- if $s.tasksStreamUrlKey }}{{ $keys = append $keys "TASKS_STREAM_URL_KEY" }}{{ end -}}
{{- $keys | toYaml -}}
{{- end -}}
{{- end -}}

{{/*
The Secret key holding a setting of a component's pod: DATABASE_URL is each service's own login, the key
<PROGRAM>_DATABASE_URL (the owner login, the key DATABASE_URL, is the migration Job's alone); KAFKA_SASL_PASSWORD is
each bus service's own Kafka password, the key KAFKA_<PROGRAM>_PASSWORD; any other setting is its own key.
Input: dict "key" (the setting) "program".
*/}}
{{- define "vision.secretKey" -}}
{{- if eq .key "DATABASE_URL" -}}
{{- printf "%s_DATABASE_URL" (upper .program) -}}
{{- else if eq .key "KAFKA_SASL_PASSWORD" -}}
{{- printf "KAFKA_%s_PASSWORD" (upper .program) -}}
{{- else -}}
{{- .key -}}
{{- end -}}
{{- end -}}

{{/* DATABASE_SERVICE_ROLES of the migration Job: each service's schema and the role of its own login. */}}
{{- define "vision.databaseServiceRoles" -}}
{{- $out := list -}}
{{- range $schema, $role := .Values.external.postgres.serviceRoles }}{{ $out = append $out (printf "%s:%s" $schema $role) }}{{ end -}}
{{- join "," $out -}}
{{- end -}}

{{/*
Stops the render when the database logins would not be one per service: two services with one role, a service
with the owner's, or (the chart's own Secret) a service URL whose user is not its role in serviceRoles.
*/}}
{{- define "vision.checkDatabaseLogins" -}}
{{- $pg := .Values.external.postgres -}}
{{- $roles := values $pg.serviceRoles -}}
{{- if ne (len $roles) (len (uniq $roles)) -}}
{{- fail "external.postgres.serviceRoles: each service needs a login of its own (docs/KUBERNETES-LOGINS.md, \"Database logins\")" -}}
{{- end -}}
{{- if not .Values.secrets.existingSecret -}}
{{- $owner := (urlParse $pg.url).userinfo | splitList ":" | first -}}
{{- range $svc, $url := $pg.serviceUrls -}}
{{- $user := (urlParse $url).userinfo | splitList ":" | first -}}
{{- if eq $user $owner -}}
{{- fail (printf "external.postgres.serviceUrls.%s logs in as the owner of external.postgres.url: each service needs a login of its own (docs/KUBERNETES-LOGINS.md, \"Database logins\")" $svc) -}}
{{- end -}}
{{- if ne $user (index $pg.serviceRoles $svc) -}}
{{- fail (printf "external.postgres.serviceUrls.%s logs in as %q, but external.postgres.serviceRoles.%s is %q" $svc $user $svc (index $pg.serviceRoles $svc)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The Secret keys one component's pod gets as files: dict "root" $ "c" (its entry of vision.components). A program
that uses the bus also gets its Kafka password (KAFKA_SASL_PASSWORD), unless the brokers take no authentication.
*/}}
{{- define "vision.secretFiles" -}}
{{- $held := include "vision.optionalSecretKeys" .root | fromYamlArray -}}
{{- $keys := .c.secrets | default list -}}
{{- if include "vision.busUsername" (dict "root" .root "program" .c.program) }}{{ $keys = append $keys "KAFKA_SASL_PASSWORD" }}{{ end -}}
{{- range .c.optionalSecrets }}{{ if has . $held }}{{ $keys = append $keys . }}{{ end }}{{ end -}}
{{- $keys | toYaml -}}
{{- end -}}

{{/* The services that use the bus (BUS_SERVICES; files/bus-services.yaml, written by scripts/bus-services-file.js). */}}
{{- define "vision.busServices" -}}
{{- (.Files.Get "files/bus-services.yaml" | fromYaml).services | toJson -}}
{{- end -}}

{{/*
The release's KAFKA_PREFIX: external.kafka.prefix rendered as a template (default "<namespace>.<release>."), put before each of
its topics, consumer groups and Kafka users (docs/KUBERNETES-LOGINS.md, "Sharing a Kafka cluster"). Stops the render when it
is not at most 100 of A-Z a-z 0-9 . _ - (KAFKA_PREFIX_RE of packages/shared/src/bus/port.ts).
*/}}
{{- define "vision.kafkaPrefix" -}}
{{- $p := tpl (.Values.external.kafka.prefix | default "") . -}}
{{- if not (regexMatch "^[A-Za-z0-9._-]{0,100}$" $p) -}}
{{- fail (printf "external.kafka.prefix renders as %q: at most 100 of A-Z a-z 0-9 . _ - (the characters of a Kafka topic name)" $p) -}}
{{- end -}}
{{- $p -}}
{{- end -}}

{{/*
Stops an upgrade that would move the release to another KAFKA_PREFIX than the one its ConfigMap holds (none in it: a
release from before the prefix, ''), unless external.kafka.movePrefix is true: the pods would leave the topics, groups
and users they run on, with what is still unconsumed there. Read with lookup, so only against a cluster (helm
install, upgrade; not helm template).
*/}}
{{- define "vision.checkKafkaPrefixMove" -}}
{{- $cm := lookup "v1" "ConfigMap" .Release.Namespace (include "vision.configMapName" .) -}}
{{- if and $cm (not .Values.external.kafka.movePrefix) -}}
{{- $was := get ($cm.data | default dict) "KAFKA_PREFIX" -}}
{{- $now := include "vision.kafkaPrefix" . -}}
{{- if ne $was $now -}}
{{- fail (printf "external.kafka.prefix renders as %q, but the release runs on the prefix %q: to keep its topics, groups and Kafka users set external.kafka.prefix=%q; to move to the new prefix once every consumer group has caught up, set external.kafka.movePrefix=true (docs/KUBERNETES-LOGINS.md, \"Sharing a Kafka cluster\")" $now $was $was) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The gateway's GATEWAY_REDIS_PREFIX: external.redis.keyPrefix rendered as a template (default "<namespace>.<release>."),
put before each of its Redis keys (docs/KUBERNETES-LOGINS.md, "Sharing a Redis server"). Stops the render when it is
not at most 100 of A-Z a-z 0-9 . _ - (REDIS_PREFIX_RE of services/gateway/src/domain/redis-keys.ts: no colon, so two
prefixes never give one key).
*/}}
{{- define "vision.redisPrefix" -}}
{{- $p := tpl (.Values.external.redis.keyPrefix | default "") . -}}
{{- if not (regexMatch "^[A-Za-z0-9._-]{0,100}$" $p) -}}
{{- fail (printf "external.redis.keyPrefix renders as %q: at most 100 of A-Z a-z 0-9 . _ - (no colon)" $p) -}}
{{- end -}}
{{- $p -}}
{{- end -}}

{{/*
The Kafka user of a program (KAFKA_SASL_USERNAME): <prefix><usernamePrefix><program> when it uses the bus and the
brokers authenticate; empty otherwise (the gateway, or external.kafka.allowUnauthenticated). Input: dict "root"
"program".
*/}}
{{- define "vision.busUsername" -}}
{{- $k := .root.Values.external.kafka -}}
{{- if and (not $k.allowUnauthenticated) (has .program (include "vision.busServices" .root | fromYamlArray)) -}}
{{- printf "%s%s%s" (include "vision.kafkaPrefix" .root) $k.sasl.usernamePrefix .program -}}
{{- end -}}
{{- end -}}

{{/*
Stops the render while the brokers would take the services without authentication and the values do not say so:
external.kafka.sasl.superUser.existingSecret (who provisions the principals) is required unless
external.kafka.allowUnauthenticated is true, and the two together are a contradiction.
*/}}
{{- define "vision.checkBusAuth" -}}
{{- $k := .Values.external.kafka -}}
{{- if and (not $k.allowUnauthenticated) (not $k.sasl.superUser.existingSecret) -}}
{{- fail "external.kafka.sasl.superUser.existingSecret is empty: the migration Job signs in as the brokers' super user from that Secret to give each service its own Kafka principal (docs/KUBERNETES-LOGINS.md, \"Bus principals\"); for brokers without authentication (a throwaway test cluster), set external.kafka.allowUnauthenticated=true" -}}
{{- end -}}
{{- if and $k.allowUnauthenticated $k.sasl.superUser.existingSecret -}}
{{- fail "external.kafka.allowUnauthenticated is true, yet external.kafka.sasl.superUser.existingSecret is set: unset one (docs/KUBERNETES-LOGINS.md, \"Bus principals\")" -}}
{{- end -}}
{{- end -}}

{{/*
The tasks service's admin token: secrets.tasksAdminToken, or read back from the release's Secret (kept across
upgrades), or 48 random characters when it holds none. Made once per render and kept in the values, so that every
Deployment's checksum/secret hashes the Secret the release stores: a token drawn again for each checksum would make
the first upgrade after an install roll every pod.
*/}}
{{- define "vision.tasksAdminToken" -}}
{{- if not (hasKey .Values "_tasksAdminToken") -}}
{{- $old := (lookup "v1" "Secret" .Release.Namespace (include "vision.secretName" .)).data | default dict -}}
{{- $_ := set .Values "_tasksAdminToken" (.Values.secrets.tasksAdminToken | default (get $old "TASKS_ADMIN_TOKEN" | b64dec) | default (randAlphaNum 48)) -}}
{{- end -}}
{{- .Values._tasksAdminToken -}}
{{- end -}}

{{/*
Each bus service's Kafka password in the chart's own Secret (no secrets.existingSecret), as a dict service -> password:
read back from the release's Secret (kept across upgrades), or 48 random characters when it holds none. Made once per
render and kept in the values, so the migration Job's hook Secret (created before the release's Secret on first
install) and the release's Secret carry the same passwords.
*/}}
{{- define "vision.busPasswords" -}}
{{- if not (hasKey .Values "_busPasswords") -}}
{{- $old := (lookup "v1" "Secret" .Release.Namespace (include "vision.secretName" .)).data | default dict -}}
{{- $out := dict -}}
{{- range $svc := include "vision.busServices" . | fromYamlArray -}}
{{- $key := include "vision.secretKey" (dict "key" "KAFKA_SASL_PASSWORD" "program" $svc) -}}
{{- $_ := set $out $svc (get $old $key | b64dec | default (randAlphaNum 48)) -}}
{{- end -}}
{{- $_ := set .Values "_busPasswords" $out -}}
{{- end -}}
{{- .Values._busPasswords | toJson -}}
{{- end -}}

{{/*
Stops the render while a development credential of the chart's default values is in use (the chart's own
Secret, no secrets.existingSecret) and allowDefaultCredentials is not true.
*/}}
{{- define "vision.refuseDefaultCredentials" -}}
{{- $in := list -}}
{{- if contains "vision-dev-password" .Values.external.postgres.url }}{{ $in = append $in "external.postgres.url" }}{{ end -}}
{{- range $svc, $url := .Values.external.postgres.serviceUrls }}{{ if contains "vision-dev-password" $url }}{{ $in = append $in (printf "external.postgres.serviceUrls.%s" $svc) }}{{ end }}{{ end -}}
{{- if eq .Values.external.s3.secretKey "vision-dev-password" }}{{ $in = append $in "external.s3.secretKey" }}{{ end -}}
{{- if and $in (not .Values.allowDefaultCredentials) -}}
{{- fail (printf "the chart's default development credentials are in use (%s): set your own, or use secrets.existingSecret; for a throwaway test cluster, set allowDefaultCredentials=true (docs/KUBERNETES.md)" (join ", " $in)) -}}
{{- end -}}
{{- end -}}

{{/*
The address ranges the stream-opening pods may not reach inside 0.0.0.0/0 and ::/0 (networkPolicy.streamEgress):
private, CGNAT, loopback, link-local (cloud metadata), multicast and reserved; in IPv6 also the ranges that carry
an IPv4 address of any class (well-known and local-use NAT64, 6to4, Teredo). IPv4-mapped addresses (::ffff:0:0/96)
are not listed: the API server reads them as IPv4 and refuses them inside ::/0; the dataplane matches such traffic
against the IPv4 block.
*/}}
{{- define "vision.streamEgressExcept" -}}
v4:
  - 0.0.0.0/8
  - 10.0.0.0/8
  - 100.64.0.0/10
  - 127.0.0.0/8
  - 169.254.0.0/16
  - 172.16.0.0/12
  - 192.0.0.0/24
  - 192.168.0.0/16
  - 198.18.0.0/15
  - 224.0.0.0/4
  - 240.0.0.0/4
v6:
  - ::/128
  - ::1/128
  - 64:ff9b::/96
  - 64:ff9b:1::/48
  - 2001::/32
  - 2002::/16
  - fc00::/7
  - fe80::/10
  - ff00::/8
{{- end -}}

{{/* An IPv4 address as a number. */}}
{{- define "vision.ipv4ToInt" -}}
{{- $o := splitList "." . -}}
{{- add (mul (atoi (index $o 0)) 16777216) (mul (atoi (index $o 1)) 65536) (mul (atoi (index $o 2)) 256) (atoi (index $o 3)) -}}
{{- end -}}

{{/* "true" when the IPv4 address .ip lies in .cidr (an IPv4 CIDR; a bare address is a /32); empty otherwise. */}}
{{- define "vision.ipv4InCidr" -}}
{{- $parts := splitList "/" .cidr -}}
{{- $base := index $parts 0 -}}
{{- if regexMatch "^[0-9]{1,3}(\\.[0-9]{1,3}){3}$" $base -}}
{{- $bits := 32 -}}
{{- if gt (len $parts) 1 }}{{ $bits = atoi (index $parts 1) }}{{ end -}}
{{- $size := 1 -}}
{{- range until (sub 32 $bits | int) }}{{ $size = mul $size 2 }}{{ end -}}
{{- if eq (div (include "vision.ipv4ToInt" .ip | atoi) $size) (div (include "vision.ipv4ToInt" $base | atoi) $size) }}true{{ end -}}
{{- end -}}
{{- end -}}

{{/*
Stops the render while networkPolicy.streamEgress is on and a server the pods use is configured (in external.*) by a
private IPv4 literal that no rule of streamEgress.backends.<name> allows (nor extraEgress, for the database logins of
tasks and inference, the only pods that get it): the pods would not reach it. Host names are not resolved, and the
keys of secrets.existingSecret (the *_DATABASE_URL, REDIS_URL) are not seen.
*/}}
{{- define "vision.streamEgressCheck" -}}
{{- $se := .Values.networkPolicy.streamEgress -}}
{{- $ext := .Values.external -}}
{{- $except := (include "vision.streamEgressExcept" . | fromYaml).v4 -}}
{{- $addrs := list -}}
{{- if not .Values.secrets.existingSecret -}}
{{- range $svc := list "gateway" "tasks" "quota" "results" "images" "inference" -}}
{{- with index $ext.postgres.serviceUrls $svc -}}
{{- $addrs = append $addrs (dict "backend" "postgres" "value" (printf "external.postgres.serviceUrls.%s" $svc) "host" (urlParse .).hostname "streamsOnly" (has $svc (list "tasks" "inference"))) -}}
{{- end -}}
{{- end -}}
{{- with $ext.redis.url -}}
{{- $addrs = append $addrs (dict "backend" "redis" "value" "external.redis.url" "host" (urlParse .).hostname) -}}
{{- end -}}
{{- end -}}
{{- range $ext.kafka.brokers -}}
{{- $addrs = append $addrs (dict "backend" "kafka" "value" "external.kafka.brokers" "host" (urlParse (printf "kafka://%s" .)).hostname) -}}
{{- end -}}
{{- if $ext.s3.endpoint -}}
{{- $addrs = append $addrs (dict "backend" "s3" "value" "external.s3.endpoint" "host" (urlParse $ext.s3.endpoint).hostname) -}}
{{- end -}}
{{- if $ext.otlp.endpoint -}}
{{- $addrs = append $addrs (dict "backend" "otlp" "value" "external.otlp.endpoint" "host" (urlParse $ext.otlp.endpoint).hostname) -}}
{{- end -}}
{{- $missing := list -}}
{{- range $addrs -}}
{{- $a := . -}}
{{- /* Loopback stays inside the pod, where no policy applies. */ -}}
{{- if and (regexMatch "^[0-9]{1,3}(\\.[0-9]{1,3}){3}$" $a.host) (not (hasPrefix "127." $a.host)) -}}
{{- $private := false -}}
{{- range $except }}{{ if include "vision.ipv4InCidr" (dict "ip" $a.host "cidr" .) }}{{ $private = true }}{{ end }}{{ end -}}
{{- if $private -}}
{{- $b := index ($se.backends | default dict) $a.backend | default dict -}}
{{- $peers := $b.to | default list -}}
{{- $covered := false -}}
{{- if $a.streamsOnly -}}
{{- range $se.extraEgress -}}
{{- if not .to }}{{ $covered = true }}{{ else }}{{ $peers = concat $peers .to }}{{ end -}}
{{- end -}}
{{- end -}}
{{- range $peers -}}
{{- if .ipBlock -}}
{{- if include "vision.ipv4InCidr" (dict "ip" $a.host "cidr" .ipBlock.cidr) -}}
{{- $out := false -}}
{{- range .ipBlock.except }}{{ if include "vision.ipv4InCidr" (dict "ip" $a.host "cidr" .) }}{{ $out = true }}{{ end }}{{ end -}}
{{- if not $out }}{{ $covered = true }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $covered -}}
{{- $missing = append $missing (printf "%s names %s (add networkPolicy.streamEgress.backends.%s.to: [{ipBlock: {cidr: %s/32}}], or a wider block)" $a.value $a.host $a.backend $a.host) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $missing -}}
{{- fail (printf "networkPolicy.streamEgress is on, and no rule of it lets the release's pods reach these private addresses: %s; or set networkPolicy.streamEgress.enabled=false (docs/KUBERNETES-NETWORK.md, \"Stream egress\")" (join "; " (uniq $missing))) -}}
{{- end -}}
{{- end -}}

{{/*
The listener of the release's Gateway (route.gateway): HTTPS on 443 with a certificate Secret, HTTP on 80
without; route.gateway.port overrides the port.
*/}}
{{- define "vision.gatewayListener" -}}
{{- $g := .Values.route.gateway -}}
{{- $tls := ne ($g.tls.certificateSecret | default "") "" -}}
name: {{ ternary "https" "http" $tls }}
protocol: {{ ternary "HTTPS" "HTTP" $tls }}
port: {{ $g.port | default (ternary 443 80 $tls) | int }}
{{- end -}}
