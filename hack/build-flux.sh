#!/usr/bin/env bash
# Builds the Flux binaries the e2e tests run, through the Go module proxy:
#   helm-controller   (github.com/fluxcd/helm-controller,   HELM_CONTROLLER_VERSION)
#   kustomize-controller (github.com/fluxcd/kustomize-controller, KUSTOMIZE_CONTROLLER_VERSION)
#   source-controller (github.com/fluxcd/source-controller, FLUX_SOURCE_CONTROLLER_VERSION)
#   notification-controller (github.com/fluxcd/notification-controller, NOTIFICATION_CONTROLLER_VERSION)
#   flux CLI          (github.com/fluxcd/flux2/v2/cmd/flux, FLUX_CLI_VERSION)
# Each tool is cached on its own; a tool already in the cache is not rebuilt.
#
# All five come from the shared module (hack/shared-module.sh), with the
# Cluster API managers, so that they compile client-go, the Kubernetes API
# types and controller-runtime once between them. The flux CLI's install
# manifests are a placeholder there: `flux install` / `flux bootstrap` need
# --manifests; every other command is unaffected.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/shared-module.sh"

# The builds below must not pick up a go.work from an enclosing folder.
export GOWORK=off

work="$(mktemp -d "${TMPDIR:-/tmp}/tdc-flux.XXXXXX")"
# The copies come from the read-only module cache: make them removable.
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# The shared module is written once, by the first tool that is not cached.
shared=""
ensure_shared() {
  if [[ -z $shared ]]; then
    shared="$work/shared"
    shared_module "$shared"
  fi
}

# check_help BINARY : the controller prints its usage (it may exit non-zero).
check_help() {
  local help
  help="$(timeout 30 "$1" --help 2>&1 || true)"
  grep -q -- '--metrics-addr' <<<"$help" \
    || die "$(basename "$1") --help does not print its usage: $(head -c 2000 <<<"$help")"
}

# build_controller TOOL MODULE VERSION
build_controller() {
  local tool=$1 module=$2 version=$3
  [[ -n $version ]] || die "no version for $tool in hack/versions.env"
  if claim "$tool" "$version" "$tool"; then
    log "$tool $version: already built ($BIN_DIR/$tool/$version)"
    return 0
  fi
  log "Building $tool $version from the module proxy, in the shared module"
  ensure_shared
  local out="$work/$tool-out"
  shared_build "$shared" "$tool" "$out" "-s -w" "$module"
  check_help "$out/$tool"
  publish "$tool" "$version" "$out"
  log "$tool $version ready in $BIN_DIR/$tool/$version ($(du -h "$BIN_DIR/$tool/$version/$tool" | cut -f1))"
}

build_flux_cli() {
  local version=$FLUX_CLI_VERSION
  [[ -n $version ]] || die "no FLUX_CLI_VERSION in hack/versions.env"
  if claim flux "$version" flux; then
    log "flux CLI $version: already built ($BIN_DIR/flux/$version)"
    return 0
  fi
  log "Building flux CLI $version from the module proxy, in the shared module"
  ensure_shared
  local out="$work/flux-out"
  shared_build "$shared" flux "$out" "-s -w -X main.VERSION=${version#v}" github.com/fluxcd/flux2/v2/cmd/flux
  local got
  got="$(timeout 30 "$out/flux" version --client 2>&1)" || die "flux version --client failed: $got"
  grep -q "${version#v}" <<<"$got" || die "flux version --client does not report ${version#v}: $got"
  publish flux "$version" "$out"
  log "flux CLI $version ready in $BIN_DIR/flux/$version ($(du -h "$BIN_DIR/flux/$version/flux" | cut -f1)): $got"
}

# With arguments, only the tools named (`make helm-controller-bin`, for the
# benchmark, passes helm-controller).
TOOLS=("$@")
wants_tool() { [[ ${#TOOLS[@]} -eq 0 || " ${TOOLS[*]} " == *" $1 "* ]]; }

if wants_tool helm-controller; then
  build_controller helm-controller github.com/fluxcd/helm-controller "$HELM_CONTROLLER_VERSION"
fi
if wants_tool kustomize-controller; then
  build_controller kustomize-controller github.com/fluxcd/kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION"
fi
if wants_tool source-controller; then
  build_controller source-controller github.com/fluxcd/source-controller "$FLUX_SOURCE_CONTROLLER_VERSION"
fi
if wants_tool notification-controller; then
  build_controller notification-controller github.com/fluxcd/notification-controller "$NOTIFICATION_CONTROLLER_VERSION"
fi
if wants_tool flux; then
  build_flux_cli
fi
