# The nginx-operator images, static binaries on scratch, running as the unprivileged user
# 65532:
#   nginx-operator  /apiserver, /controller and /etcd-snapshot (the last stage: the default)
#   nginx-exporter  /nginx-exporter alone, the metrics and reload sidecar of every nginx pod
#                   (--target nginx-exporter): a node running nginx pulls 3.7 MiB, not
#                   the operator's 48
#
#   docker build -t nginx-operator . && docker build --target nginx-exporter -t nginx-exporter .
#       compiles the binaries in a golang stage (needs the network for the base image
#       and Go modules). Optional: --build-arg VERSION=v0.2.0 --build-arg REVISION=$(git rev-parse HEAD)
#
#   make images   (hack/images/build.sh)
#       compiles them on the host into _output/images/bin/<os>_<arch>/ and builds this file with
#       --build-arg BINARIES=prebuilt, which needs no base image at all: the golang stage
#       is never used, so docker and buildah skip it.

ARG GO_VERSION=1.26
# source: compile in the golang stage; prebuilt: take _output/images/bin/ from the context.
ARG BINARIES=source

# The compiler runs on the build machine and cross-compiles for each target platform
# (docker buildx build --platform linux/amd64,linux/arm64).
FROM --platform=${BUILDPLATFORM} golang:${GO_VERSION} AS source
WORKDIR /src
COPY go.mod go.sum ./
COPY pkg/apis/go.mod pkg/apis/go.sum pkg/apis/
COPY pkg/generated/go.mod pkg/generated/go.sum pkg/generated/
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
# A VERSION, when given, must be semantic (vX.Y.Z[-pre]): the binaries refuse to start otherwise.
ARG VERSION
ARG REVISION
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    set -eu; \
    pkg=$(go list -m)/pkg/version; \
    ldflags="-s -w"; \
    if [ -n "${VERSION}" ]; then ldflags="${ldflags} -X ${pkg}.gitVersion=${VERSION}"; fi; \
    if [ -n "${REVISION}" ]; then ldflags="${ldflags} -X ${pkg}.gitCommit=${REVISION}"; fi; \
    for cmd in apiserver controller etcd-snapshot nginx-exporter; do \
      CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags "${ldflags}" -o /out/${cmd} ./cmd/${cmd}; \
    done

FROM scratch AS prebuilt
ARG TARGETOS
ARG TARGETARCH
COPY _output/images/bin/${TARGETOS}_${TARGETARCH}/apiserver _output/images/bin/${TARGETOS}_${TARGETARCH}/controller \
     _output/images/bin/${TARGETOS}_${TARGETARCH}/etcd-snapshot _output/images/bin/${TARGETOS}_${TARGETARCH}/nginx-exporter /out/

# The stage BINARIES names (COPY --from cannot expand a build argument). The ":-source"
# repeats the default because buildah (1.28) decides which stages to skip from the
# --build-arg values alone.
FROM ${BINARIES:-source} AS binaries

# What both images share: where they come from, their license and version, and the user.
FROM scratch AS image
ARG VERSION
ARG REVISION
LABEL org.opencontainers.image.source="https://github.com/example/nginx-operator" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
USER 65532:65532

FROM image AS nginx-exporter
LABEL org.opencontainers.image.title="nginx-exporter" \
      org.opencontainers.image.description="The metrics and reload sidecar of the nginx pods of NginxOperators: exports nginx's stub_status for Prometheus and reloads nginx when its content volumes change"
COPY --from=binaries /out/nginx-exporter /
ENTRYPOINT ["/nginx-exporter"]

FROM image
LABEL org.opencontainers.image.title="nginx-operator" \
      org.opencontainers.image.description="Aggregated API server (/apiserver), controller (/controller) and etcd backup (/etcd-snapshot) for NginxOperator"
COPY --from=binaries /out/apiserver /out/controller /out/etcd-snapshot /
CMD ["/apiserver"]
