# syntax=docker/dockerfile:1
# Builds the controller image: a static binary on distroless, running as the
# image's nonroot user (65532), which the chart and config/manager expect.
FROM golang:1.26.8 AS builder
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
# Only the packages the binary is built from (api, cmd, controllers, internal).
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
# Set by `docker buildx build --platform`; plain `docker build` builds for linux/<host arch>.
ARG TARGETOS=linux
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/template-drift-controller ./cmd/template-drift-controller

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=builder /out/template-drift-controller /template-drift-controller
USER 65532:65532
ENTRYPOINT ["/template-drift-controller"]
