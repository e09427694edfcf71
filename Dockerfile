# syntax=docker/dockerfile:1
# Builds the controller image with a Docker daemon (BuildKit): a static
# binary on distroless, running as the image's nonroot user (65532), which
# the chart and config/manager expect. `make image` builds the same image
# layout without a daemon (docs/release.md). The compiler runs on the build
# host's platform and cross-compiles for each --platform, so a
# multi-platform build needs no emulation:
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     $(make -s version | sed 's/^/--build-arg /') -t IMAGE .
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS builder
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
# Only the packages the binary is built from (api, cmd, controllers, internal).
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
# Set by BuildKit from --platform (default: the daemon's own platform).
ARG TARGETOS
ARG TARGETARCH
# What --version prints, as the Makefile's LDFLAGS stamp it (`make version`).
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false \
    -ldflags="-s -w -X github.com/templatedrift/template-drift-controller/internal/version.Version=${VERSION} -X github.com/templatedrift/template-drift-controller/internal/version.Commit=${COMMIT} -X github.com/templatedrift/template-drift-controller/internal/version.Date=${DATE}" \
    -o /out/template-drift-controller ./cmd/template-drift-controller

FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
ARG COMMIT=unknown
ARG DATE=unknown
LABEL org.opencontainers.image.title="template-drift-controller" \
      org.opencontainers.image.source="https://github.com/templatedrift/template-drift-controller" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}" \
      org.opencontainers.image.created="${DATE}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder /out/template-drift-controller /template-drift-controller
USER 65532:65532
ENTRYPOINT ["/template-drift-controller"]
