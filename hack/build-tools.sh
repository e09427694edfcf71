#!/usr/bin/env bash
# Builds the code generators the Makefile runs (today only controller-gen,
# for `make manifests`) from the Go module proxy with `go install`, into the
# user cache and bin/<tool>/<version>/, as the other hack/build-*.sh scripts do.
#
# The version lives here rather than in hack/versions.env because it pins a
# build tool, not part of the test control plane that internal/testenv reads.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# controller-gen: v0.23.0 is the newest release on the proxy, built against
# k8s.io v0.37 (as go.mod) and requiring go >= 1.26.0. Bump it together with
# k8s.io/* and regenerate with `make manifests`. The Makefile reads this line
# (keep it a plain NAME=value assignment).
CONTROLLER_GEN_VERSION=v0.23.0

if have_cached controller-gen "$CONTROLLER_GEN_VERSION" controller-gen; then
  log "controller-gen $CONTROLLER_GEN_VERSION: already built ($BIN_DIR/controller-gen/$CONTROLLER_GEN_VERSION)"
  exit 0
fi

log "Building controller-gen $CONTROLLER_GEN_VERSION from the module proxy (cold: 1-3 min)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tdc-tools.XXXXXX")"
trap 'rm -rf "$work"' EXIT
out="$work/out"
mkdir -p "$out"

# Outside the repository, so go.mod of this module plays no part; GOFLAGS is
# cleared so a caller's -mod=vendor cannot break `go install pkg@version`.
(cd "$work" && GOBIN="$out" GOFLAGS= CGO_ENABLED=0 timed "go install controller-gen" \
  go install -trimpath -ldflags "-s -w" "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_GEN_VERSION") \
  || die "building controller-gen $CONTROLLER_GEN_VERSION failed"
"$out/controller-gen" --version | grep -q "$CONTROLLER_GEN_VERSION" \
  || die "controller-gen does not report $CONTROLLER_GEN_VERSION: $("$out/controller-gen" --version)"
publish controller-gen "$CONTROLLER_GEN_VERSION" "$out"
log "controller-gen $("$BIN_DIR/controller-gen/$CONTROLLER_GEN_VERSION/controller-gen" --version) ready in $BIN_DIR/controller-gen/$CONTROLLER_GEN_VERSION"
