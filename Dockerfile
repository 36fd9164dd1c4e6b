# syntax=docker/dockerfile:1
# Build: docker build -t gatehouse .
# Run:   docker run -it -v gatehouse-data:/data -e OPENAI_API_KEY -e TELEGRAM_BOT_TOKEN gatehouse
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/bot ./cmd/bot \
 && mkdir -p /out/data/workspace

# distroless static: no shell, no package manager, runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bot /usr/local/bin/bot
COPY --from=build --chown=nonroot:nonroot /out/data /data
COPY config.yaml /etc/gatehouse/config.yaml
# config, database and workspace live on the mounted volume /data;
# secrets come from the environment (${VAR} in the config).
WORKDIR /data
VOLUME /data
ENV GATEHOUSE_CONFIG=/etc/gatehouse/config.yaml
EXPOSE 9090
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/bot"]
CMD ["run", "-config", "/etc/gatehouse/config.yaml"]
