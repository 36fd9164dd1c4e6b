# syntax=docker/dockerfile:1
# Build: docker build -t gatehouse .
# Run:   docker run -it -v gatehouse-data:/data -e OPENAI_API_KEY -e TELEGRAM_BOT_TOKEN gatehouse
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/bot ./cmd/bot

# Alpine rather than distroless: the shell tool runs `sh -c`, so the image
# needs a shell. The binary itself is static.
FROM alpine:3.20
RUN adduser -D -H -u 10001 gatehouse \
 && mkdir -p /data/workspace && chown -R gatehouse:gatehouse /data
COPY --from=build /out/bot /usr/local/bin/bot
# The config is owned by root and read-only to the bot, so an approved shell
# command cannot rewrite the policy for the next start; mount your own over
# it (-v "$PWD/config.yaml:/etc/gatehouse/config.yaml:ro"). The database
# (gatehouse.db) and the workspace live on the volume /data. Secrets come
# from the environment (${VAR} in the config), never from the image.
COPY config.yaml /etc/gatehouse/config.yaml
WORKDIR /data
VOLUME /data
EXPOSE 9090
USER gatehouse
ENTRYPOINT ["/usr/local/bin/bot"]
CMD ["run", "-config", "/etc/gatehouse/config.yaml"]
