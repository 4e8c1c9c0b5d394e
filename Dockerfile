# syntax=docker/dockerfile:1
#
# One image for every service; the command picks the service:
#   docker run IMAGE node services/tasks/dist/main.js
# (gateway, tasks, quota, results, images, inference; the default command starts the gateway).
# Models are never baked in: mount them and point VISION_MODELS_DIR at the mount (default /models).
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz, docker-compose declares its own checks.

ARG NODE_IMAGE=node:20-slim

# ---- build: every dependency, TypeScript compile --------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Manifests first so the dependency layer is reused while only sources change.
# .npmrc carries onnxruntime-node-install=skip (the CPU binaries ship inside the package).
COPY package.json package-lock.json .npmrc ./
COPY packages/shared/package.json packages/shared/
COPY apps/standalone/package.json apps/standalone/
COPY packages/console/package.json packages/console/
COPY services/gateway/package.json services/gateway/
COPY services/tasks/package.json services/tasks/
COPY services/quota/package.json services/quota/
COPY services/results/package.json services/results/
COPY services/images/package.json services/images/
COPY services/inference/package.json services/inference/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.build.json ./
COPY packages/ packages/
COPY services/ services/
COPY apps/ apps/
RUN npm run build

# ---- production dependencies only -----------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json /app/.npmrc ./
COPY --from=build /app/packages/shared/package.json packages/shared/
COPY --from=build /app/apps/standalone/package.json apps/standalone/
COPY --from=build /app/packages/console/package.json packages/console/
COPY --from=build /app/services/gateway/package.json services/gateway/
COPY --from=build /app/services/tasks/package.json services/tasks/
COPY --from=build /app/services/quota/package.json services/quota/
COPY --from=build /app/services/results/package.json services/results/
COPY --from=build /app/services/images/package.json services/images/
COPY --from=build /app/services/inference/package.json services/inference/
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund

# ---- runtime ----------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# ffmpeg/ffprobe: inference decodes video with ffmpeg, tasks probes uploads with ffprobe.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ffmpeg ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    VISION_MODE=distributed \
    VISION_MODELS_DIR=/models \
    VISION_DATA_DIR=/tmp/vision-data \
    GATEWAY_OPENAPI_FILE=/app/docs/openapi.yaml
COPY --from=prod-deps /app/ ./
COPY --from=build /app/packages/shared/dist packages/shared/dist
COPY --from=build /app/apps/standalone/dist apps/standalone/dist
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
# Models come from a volume mounted here (read-only is fine).
RUN mkdir -p /models && chmod 0755 /models
# The node image's unprivileged "node" user, by number so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 8101 8102 8103 8104 8105
CMD ["node", "services/gateway/dist/main.js"]
