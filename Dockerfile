# syntax=docker/dockerfile:1
#
# One image for every service; the command picks the service:
#   docker run IMAGE node services/tasks/dist/main.js
# (gateway, tasks, quota, results, images, inference; the default command starts the gateway).
# Carries the default models in /models (fire/smoke from models/, COCO YOLOX-Nano from the build context
# "coco-model", both checked against scripts/image/models.sha256); a volume mounted at /models overrides them.
#   podman build --network host --build-context coco-model=DIR_WITH_yolox_nano.onnx \
#     [--secret id=host-ca,src=/etc/ssl/certs/ca-certificates.crt] -t vision:TAG .
# The optional host-ca secret is a CA bundle npm must trust (a TLS-intercepting proxy); it is mounted at
# /run/host-ca.crt for the npm steps only and never lands in a layer.
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz, docker-compose declares its own checks.

ARG NODE_IMAGE=node:26-slim

# ---- build: every dependency, TypeScript compile --------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip
# Manifests first so the dependency layer is reused while only sources change.
# package.json's allowScripts denies onnxruntime-node's postinstall (it only fetches CUDA binaries; the CPU ones ship
# inside the package); ONNXRUNTIME_NODE_INSTALL=skip says the same to an npm without allowScripts.
COPY package.json package-lock.json .npmrc ./
COPY packages/shared/package.json packages/shared/
COPY apps/standalone/package.json apps/standalone/
COPY packages/console/package.json packages/console/
COPY packages/sdk/package.json packages/sdk/
COPY packages/cli/package.json packages/cli/
COPY services/gateway/package.json services/gateway/
COPY services/tasks/package.json services/tasks/
COPY services/quota/package.json services/quota/
COPY services/results/package.json services/results/
COPY services/images/package.json services/images/
COPY services/inference/package.json services/inference/
RUN --mount=type=cache,target=/root/.npm --mount=type=secret,id=host-ca,target=/run/host-ca.crt \
    if [ -s /run/host-ca.crt ]; then export NODE_EXTRA_CA_CERTS=/run/host-ca.crt; fi; \
    npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.build.json ./
COPY packages/ packages/
COPY services/ services/
COPY apps/ apps/
RUN npm run build

# ---- production dependencies only -----------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY --from=build /app/package.json /app/package-lock.json /app/.npmrc ./
COPY --from=build /app/packages/shared/package.json packages/shared/
COPY --from=build /app/apps/standalone/package.json apps/standalone/
COPY --from=build /app/packages/console/package.json packages/console/
COPY --from=build /app/packages/sdk/package.json packages/sdk/
COPY --from=build /app/packages/cli/package.json packages/cli/
COPY --from=build /app/services/gateway/package.json services/gateway/
COPY --from=build /app/services/tasks/package.json services/tasks/
COPY --from=build /app/services/quota/package.json services/quota/
COPY --from=build /app/services/results/package.json services/results/
COPY --from=build /app/services/images/package.json services/images/
COPY --from=build /app/services/inference/package.json services/inference/
RUN --mount=type=cache,target=/root/.npm --mount=type=secret,id=host-ca,target=/run/host-ca.crt \
    if [ -s /run/host-ca.crt ]; then export NODE_EXTRA_CA_CERTS=/run/host-ca.crt; fi; \
    npm ci --omit=dev --no-audit --no-fund
# onnxruntime-node ships every platform's binaries (about 220 MB for darwin and win32): keep this platform's only.
RUN cd node_modules/onnxruntime-node/bin \
 && find . -mindepth 2 -maxdepth 2 ! -name linux -exec rm -rf {} + \
 && find . -mindepth 3 -maxdepth 3 -path '*/linux/*' ! -name "$(node -p process.arch)" -exec rm -rf {} +

# ---- default models, checked ------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS models
COPY models/fire_smoke_yolox_nano.onnx models/fire_smoke_yolox_nano.labels.txt models/fire_smoke_yolox_nano.json /models/
COPY --from=coco-model yolox_nano.onnx yolox_nano.labels.txt /models/
COPY scripts/image/models.sha256 /tmp/models.sha256
RUN cd /models && sha256sum -c /tmp/models.sha256 && chmod 0644 /models/*

# ---- decoder sandbox: ffmpeg and ffprobe run under Landlock (scripts/image/decoder-sandbox.c, docs/SECURITY.md) --
FROM ${NODE_IMAGE} AS sandbox
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
COPY scripts/image/decoder-sandbox.c /tmp/decoder-sandbox.c
RUN gcc -O2 -Wall -Wextra -Werror -o /usr/local/bin/vision-decoder-sandbox /tmp/decoder-sandbox.c

# ---- runtime ----------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# ffmpeg/ffprobe: inference decodes video with ffmpeg, tasks probes uploads with ffprobe.
# Slimmed in the same layer: no docs, manuals or translations (dpkg path-exclude; copyright files stay), no
# downloaded packages (a debootstrap base keeps them, unlike the official slim images), and none of what
# Debian's ffmpeg pulls in only for a display: Mesa's GL drivers (dri/) with the LLVM and Z3 they load, and
# Intel's media SDK runtime (mfx/). ffmpeg and ffprobe link none of those; the ldd check below proves it at
# build time, so a Debian update that starts linking one fails the build instead of the service.
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
      'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*' 'path-exclude=/usr/share/locale/*' \
      > /etc/dpkg/dpkg.cfg.d/01-slim \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ffmpeg ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && rm -rf /usr/lib/*-linux-gnu/dri /usr/lib/*-linux-gnu/mfx /usr/lib/*-linux-gnu/libLLVM-*.so* \
      /usr/lib/*-linux-gnu/libz3.so* /usr/lib/*-linux-gnu/libmfxhw64.so* \
 && if ldd /usr/bin/ffmpeg /usr/bin/ffprobe | grep 'not found'; then exit 1; fi \
 && ffmpeg -hide_banner -version >/dev/null && ffprobe -hide_banner -version >/dev/null
WORKDIR /app
ENV NODE_ENV=production \
    VISION_MODE=distributed \
    VISION_MODELS_DIR=/models \
    VISION_DATA_DIR=/tmp/vision-data \
    GATEWAY_OPENAPI_FILE=/app/docs/openapi.yaml
COPY --from=models /models /models
COPY --from=sandbox /usr/local/bin/vision-decoder-sandbox /usr/local/bin/vision-decoder-sandbox
COPY --from=prod-deps /app/ ./
COPY --from=build /app/packages/shared/dist packages/shared/dist
COPY --from=build /app/apps/standalone/dist apps/standalone/dist
COPY --from=build /app/packages/sdk/dist packages/sdk/dist
COPY --from=build /app/services/gateway/dist services/gateway/dist
# The web console's static build, served by the gateway at /console/.
COPY --from=build /app/packages/console/dist packages/console/dist
COPY --from=build /app/services/tasks/dist services/tasks/dist
COPY --from=build /app/services/quota/dist services/quota/dist
COPY --from=build /app/services/results/dist services/results/dist
COPY --from=build /app/services/images/dist services/images/dist
COPY --from=build /app/services/inference/dist services/inference/dist
# The gateway serves docs/openapi.yaml; scripts/ holds operator entry points (migrations, helpers).
COPY docs/openapi.yaml docs/openapi.yaml
COPY scripts/ scripts/
# The node image's unprivileged "node" user, by number so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 8101 8102 8103 8104 8105
CMD ["node", "services/gateway/dist/main.js"]
