# zkafka broker image: a static Go binary on distroless, run as a non-root user.
#
#   docker build -t zkafka .                                   # for this machine's architecture
#   docker buildx build --platform linux/amd64,linux/arm64 -t zkafka .
#
# The broker reads its configuration from KAFKA_* variables (KAFKA_BROKER_ID,
# KAFKA_ZOOKEEPER_CONNECT, KAFKA_ADVERTISED_LISTENERS, ...; see docker-compose.yml),
# so `docker run -e KAFKA_ZOOKEEPER_CONNECT=zk:2181 zkafka` needs no properties file.

# The builder runs on the build machine's platform and cross-compiles for the
# target one, so a multi-platform build needs no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags='-s -w' -o /out/zkafka ./cmd/zkafka
# The data directory, owned by distroless's "nonroot" user (65532), so a named
# volume mounted there starts out writable.
RUN mkdir -p /out/var/lib/zkafka

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/zkafka /usr/local/bin/zkafka
COPY --from=build --chown=65532:65532 /out/var/lib/zkafka /var/lib/zkafka
USER 65532:65532
ENV KAFKA_LOG_DIRS=/var/lib/zkafka/data
VOLUME ["/var/lib/zkafka"]
EXPOSE 9092 19092
# Healthy once the broker answers and is registered under $KAFKA_BROKER_ID.
HEALTHCHECK --interval=5s --timeout=5s --start-period=10s --retries=12 \
    CMD ["/usr/local/bin/zkafka", "broker-health", "--bootstrap-server", "localhost:9092"]
ENTRYPOINT ["/usr/local/bin/zkafka"]
CMD ["broker"]
