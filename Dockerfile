# syntax=docker/dockerfile:1
# Build: docker build -t gatehouse .
# Run:   docker run -it -v gatehouse-data:/data -e OPENAI_API_KEY -e TELEGRAM_BOT_TOKEN gatehouse
# Multi-arch (the release's three Linux platforms, one manifest):
#   docker buildx build --platform linux/amd64,linux/arm64,linux/arm/v7 \
#     --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) \
#     -t ghcr.io/gatehouse-bot/gatehouse:1.2.3 --push .
# The build stage runs on the builder's own platform and cross-compiles
# (the binary is pure Go): only the last stage's adduser runs under
# emulation (QEMU binfmt on the builder, as buildx sets up).
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Set by BuildKit from --platform (linux; amd64, arm64 or arm; v7 for arm),
# the builder's own platform without one.
ARG TARGETOS TARGETARCH TARGETVARIANT
# What `bot version` prints; .dockerignore keeps .git out, so unset they
# print as "devel" with no commit.
ARG VERSION=
ARG COMMIT=
# -tags nethttpomithttp2: without net/http's HTTP/2, as the release builds
# (.goreleaser.yaml).
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH GOARM=${TARGETVARIANT#v} \
    go build -tags nethttpomithttp2 -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/bot ./cmd/bot
# The image's config is the shipped config.yaml with three values changed:
# the database and the workspace on the volume /data (relative paths would
# resolve against /etc/gatehouse, the config's directory), and the health
# server on every interface, so that EXPOSE 9090 is true and a published
# port reaches /healthz. Each change is checked: the build fails if the
# shipped file no longer has the line it replaces.
RUN sed -e 's|^  workspace: ./workspace$|  workspace: /data/workspace|' \
        -e 's|^  dsn: gatehouse.db$|  dsn: /data/gatehouse.db|' \
        -e 's|^  listen: 127.0.0.1:9090 |  listen: 0.0.0.0:9090   |' \
        config.yaml > /out/config.yaml \
 && grep -q '^  workspace: /data/workspace$' /out/config.yaml \
 && grep -q '^  dsn: /data/gatehouse.db$' /out/config.yaml \
 && grep -q '^  listen: 0.0.0.0:9090 ' /out/config.yaml

# Alpine rather than distroless: the shell tool runs `sh -c`, so the image
# needs a shell. The binary itself is static.
FROM alpine:3.20
RUN adduser -D -H -u 10001 gatehouse \
 && mkdir -p /data/workspace && chown -R gatehouse:gatehouse /data
COPY --from=build /out/bot /usr/local/bin/bot
# The config is owned by root and read-only to the bot, so an approved shell
# command cannot rewrite the policy for the next start; mount your own over
# it (-v "$PWD/config.yaml:/etc/gatehouse/config.yaml:ro"; relative paths in
# it resolve against /etc/gatehouse, so write /data/... for the database and
# the workspace). The database (gatehouse.db, with its lock file) and the
# workspace live on the volume /data. Secrets come from the environment
# (${VAR} in the config), never from the image.
COPY --from=build /out/config.yaml /etc/gatehouse/config.yaml
WORKDIR /data
VOLUME /data
# http.listen in the image's config: /healthz /readyz /metrics. POST
# /-/reload is off (http.reload: false); `docker kill -s HUP` reloads.
EXPOSE 9090
USER gatehouse
# The image has no curl: `bot healthcheck` GETs /healthz on http.listen from
# the same config (a mounted config's listen address included).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/bot", "healthcheck", "-config", "/etc/gatehouse/config.yaml"]
ENTRYPOINT ["/usr/local/bin/bot"]
CMD ["run", "-config", "/etc/gatehouse/config.yaml"]
