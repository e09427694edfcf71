#!/usr/bin/env bash
# Builds the real Cluster API and Metal3 managers from the Go module proxy, for
# the tests that will run them with their webhooks (see docs/notes/real-managers.md):
#   capi  (sigs.k8s.io/cluster-api, CAPI_VERSION): core, bootstrap-kubeadm, controlplane-kubeadm
#   capm3 (github.com/metal3-io/cluster-api-provider-metal3, CAPM3_VERSION): manager
# Each is cached by version like the other tools; a cached one is not rebuilt.
#
# The Cluster API managers come from the shared module (hack/shared-module.sh),
# with the Flux controllers and CLI, so that they compile the Kubernetes
# libraries once between them. CAPM3 is built from its own go.mod: neither it
# nor Cluster API can be `go install`ed, as their go.mod replaces the /api
# sub-module with ./api, which the module zip does not hold, so the module
# source is copied into a writable folder and the replace is pointed at the
# published /api module of the same version. The Metal3 modules are unknown to
# the checksum database (GONOSUMDB); go.sum of the copy still pins every hash.
#
# Part of `make testbin`: internal/testenv runs these managers with their
# webhooks (testenv.Options.Managers).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/shared-module.sh"

export GOWORK=off GOFLAGS= CGO_ENABLED=0
work="$(mktemp -d "${TMPDIR:-/tmp}/tdc-capi.XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# api_copy MODULE VERSION DIR : copy MODULE@VERSION's source into DIR and
# point its ./api replace at the published MODULE/api@VERSION.
api_copy() {
  local module=$1 version=$2 dir=$3
  writable_copy "$module" "$version" "$dir"
  grep -qE "^replace $module/api => \./api" "$dir/go.mod" \
    || log "note: $module@$version no longer replaces $module/api with ./api"
  (cd "$dir" && go mod edit -replace "$module/api=$module/api@$version" && go mod download "$module/api") \
    || die "cannot point $module/api at $version"
}

build_capi() {
  local version=$CAPI_VERSION-$MANAGERS_FLAVOR
  if claim capi "$version" core bootstrap-kubeadm controlplane-kubeadm; then
    log "Cluster API $version managers: already built ($BIN_DIR/capi/$version)"
    return 0
  fi
  log "Building the Cluster API $version managers from the module proxy (cold: 10-15 min)"
  local dir="$work/shared" out="$work/capi-out" minor
  shared_module "$dir"
  minor="$(cut -d. -f2 <<<"$CAPI_VERSION")"
  local ld="-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$CAPI_VERSION -X sigs.k8s.io/cluster-api/version.gitMajor=1 -X sigs.k8s.io/cluster-api/version.gitMinor=$minor"
  local pkg name
  for pkg in core bootstrap/kubeadm controlplane/kubeadm; do
    name="${pkg//\//-}"
    shared_build "$dir" "$name" "$out" "$ld" "sigs.k8s.io/cluster-api/$pkg"
    prints --webhook-port "$out/$name" --help || die "capi $name --help lacks --webhook-port"
  done
  publish capi "$version" "$out"
  log "Cluster API $version managers ready in $BIN_DIR/capi/$version"
}

build_capm3() {
  local version=$CAPM3_VERSION-$MANAGERS_FLAVOR module=github.com/metal3-io/cluster-api-provider-metal3
  if claim capm3 "$version" manager; then
    log "CAPM3 $version manager: already built ($BIN_DIR/capm3/$version)"
    return 0
  fi
  log "Building the CAPM3 $version manager from the module proxy (cold: 5-10 min)"
  local dir="$work/capm3" out="$work/capm3-out"
  (export GONOSUMDB=github.com/metal3-io; unset GOPRIVATE
   api_copy "$module" "$CAPM3_VERSION" "$dir"
   bind_webhooks_from_env "$dir/main.go"
   mkdir -p "$out"
   cd "$dir" && timed "go build capm3 manager" go build -trimpath -ldflags "-s -w" -o "$out/manager" .) \
    || die "building CAPM3 $version failed"
  prints --webhook-port "$out/manager" --help || die "capm3 manager --help lacks --webhook-port"
  publish capm3 "$version" "$out"
  log "CAPM3 $version manager ready in $BIN_DIR/capm3/$version"
}

case "${1:-all}" in
  capi) build_capi ;;
  capm3) build_capm3 ;;
  all) build_capi; build_capm3 ;;
  *) die "usage: $0 [capi|capm3|all]" ;;
esac
