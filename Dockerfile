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
# config.yaml, the database (gatehouse.db) and the workspace live on the
# volume /data; a named volume starts with this default config. Secrets come
# from the environment (${VAR} in the config), never from the image.
COPY --chown=gatehouse:gatehouse config.yaml /data/config.yaml
WORKDIR /data
VOLUME /data
EXPOSE 9090
USER gatehouse
ENTRYPOINT ["/usr/local/bin/bot"]
CMD ["run", "-config", "/data/config.yaml"]
