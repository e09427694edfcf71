#!/usr/bin/env bash
# Builds the Flux binaries the e2e tests run, through the Go module proxy:
#   helm-controller   (github.com/fluxcd/helm-controller,   HELM_CONTROLLER_VERSION)
#   source-controller (github.com/fluxcd/source-controller, FLUX_SOURCE_CONTROLLER_VERSION)
#   notification-controller (github.com/fluxcd/notification-controller, NOTIFICATION_CONTROLLER_VERSION)
#   flux CLI          (github.com/fluxcd/flux2/v2/cmd/flux, FLUX_CLI_VERSION)
# Each tool is cached on its own; a tool already in the cache is not rebuilt.
#
# The controllers cannot be `go install`ed: their go.mod replaces the /api
# submodule with ./api. A throw-away tools module requires the controller and
# its published /api module at the same version and copies the controller's
# other (non-local) replace directives.
#
# The flux CLI embeds cmd/flux/manifests/*.yaml, which upstream generates with a
# networked kustomize step, so the module zip lacks it. The module source is
# copied into a writable folder, a placeholder manifest satisfies the embed
# pattern, and ./cmd/flux is built as the main module. The placeholder means
# `flux install` / `flux bootstrap` cannot use embedded manifests (pass
# --manifests to them); every other command is unaffected.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELM_CONTROLLER_VERSION="${HELM_CONTROLLER_VERSION}"
FLUX_SOURCE_CONTROLLER_VERSION="${FLUX_SOURCE_CONTROLLER_VERSION}"
NOTIFICATION_CONTROLLER_VERSION="${NOTIFICATION_CONTROLLER_VERSION}"
FLUX_CLI_VERSION="${FLUX_CLI_VERSION}"
# The builds below must not pick up a go.work from an enclosing folder.
export GOWORK=off

work="$(mktemp -d "${TMPDIR:-/tmp}/tdc-flux.XXXXXX")"
# The flux source copy comes from the read-only module cache: make it removable.
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

# module_json MODULE VERSION : download MODULE@VERSION, print `go mod download -json`.
module_json() {
  local json
  json="$(cd "$work" && go mod download -json "$1@$2")" || die "cannot download $1@$2: $json"
  printf '%s\n' "$json"
}
# json_field NAME : print the string field NAME of that JSON (Dir, GoMod...).
json_field() { sed -n "s/.*\"$1\": \"\(.*\)\".*/\1/p"; }

# nonlocal_replaces GOMOD : print the replace directives of GOMOD (single-line and
# block form) whose target is not a local path, one "old => new" a line.
nonlocal_replaces() {
  awk '
    /^replace[ \t]*\(/ { block = 1; next }
    block && /^[ \t]*\)/ { block = 0; next }
    block { print; next }
    /^replace[ \t]/ { sub(/^replace[ \t]+/, ""); print }
  ' "$1" | sed -e 's#[ \t]*//.*##' -e 's/^[ \t]*//' | grep -E '=>' | grep -vE '=>[ \t]*\.\.?/' || true
}

# check_help BINARY : the controller prints its usage (it may exit non-zero).
check_help() {
  local help
  help="$(timeout 30 "$1" --help 2>&1 || true)"
  grep -q -- '--metrics-addr' <<<"$help" \
    || die "$(basename "$1") --help does not print its usage: $(head -c 2000 <<<"$help")"
}

# build_controller TOOL MODULE VERSION [EXTRA_REPLACE...]
build_controller() {
  local tool=$1 module=$2 version=$3; shift 3
  [[ -n $version ]] || die "no version for $tool in hack/versions.env"
  if claim "$tool" "$version" "$tool"; then
    log "$tool $version: already built ($BIN_DIR/$tool/$version)"
    return 0
  fi
  log "Building $tool $version from the module proxy (cold: about 2-3 min)"
  local dir="$work/$tool" gomod
  mkdir -p "$dir"
  gomod="$(module_json "$module" "$version" | json_field GoMod)"
  [[ -f "$gomod" ]] || die "go.mod of $module@$version not found"
  grep -qE "^replace $module/api => \./api" "$gomod" \
    || log "note: $module@$version no longer replaces $module/api with ./api"
  {
    echo "module tdc.local/$tool"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//')"
    echo
    echo "require ("
    echo "	$module $version"
    echo "	$module/api $version"
    echo ")"
    echo
    echo "// Non-local replace directives of $module@$version."
    nonlocal_replaces "$gomod" | sed 's/^/replace /'
    local r
    for r in "$@"; do echo "replace $r"; done
  } >"$dir/go.mod"
  cat >"$dir/tools.go" <<GO
//go:build tools

package tools

import _ "$module"
GO
  # -e: some test-only dependencies of the controller are refused by the proxy.
  (cd "$dir" && go mod tidy -e >"$dir/tidy.log" 2>&1) \
    || { cat "$dir/tidy.log" >&2; die "go mod tidy for $tool failed"; }
  local out="$dir/out"
  mkdir -p "$out"
  (cd "$dir" && CGO_ENABLED=0 timed "go build $tool $version" \
    go build -trimpath -ldflags "-s -w" -o "$out/" "$module") \
    || { cat "$dir/tidy.log" "$dir/go.mod" >&2; die "building $tool $version failed (tidy log and go.mod above)"; }
  [[ -x "$out/$tool" ]] || die "go build did not produce $out/$tool"
  check_help "$out/$tool"
  publish "$tool" "$version" "$out"
  log "$tool $version ready in $BIN_DIR/$tool/$version ($(du -h "$BIN_DIR/$tool/$version/$tool" | cut -f1))"
}

build_flux_cli() {
  local version=$FLUX_CLI_VERSION module=github.com/fluxcd/flux2/v2
  [[ -n $version ]] || die "no FLUX_CLI_VERSION in hack/versions.env"
  if claim flux "$version" flux; then
    log "flux CLI $version: already built ($BIN_DIR/flux/$version)"
    return 0
  fi
  log "Building flux CLI $version from the module proxy (cold: about 2.5 min)"
  local dir="$work/flux" src
  src="$(module_json "$module" "$version" | json_field Dir)"
  [[ -d "$src/cmd/flux" ]] || die "source of $module@$version not found (Dir: $src)"
  mkdir -p "$dir"
  cp -R "$src" "$dir/src"
  chmod -R u+w "$dir/src"
  # Satisfy the embed of the generated install manifests with a placeholder.
  local embed
  embed="$(grep -h '^//go:embed' "$dir"/src/cmd/flux/*.go || true)"
  [[ $embed == "//go:embed manifests/*.yaml" ]] \
    || die "cmd/flux of $module@$version embeds '${embed:-nothing}', expected '//go:embed manifests/*.yaml': update hack/build-flux.sh"
  mkdir -p "$dir/src/cmd/flux/manifests"
  cat >"$dir/src/cmd/flux/manifests/placeholder.yaml" <<'YAML'
# Placeholder: upstream generates the install manifests embedded here with a
# networked kustomize step. Built by hack/build-flux.sh; pass --manifests to
# `flux install` / `flux bootstrap`.
YAML
  # The module zip carries go.sum; -mod=mod lets go add a missing entry.
  (cd "$dir/src" && go list -mod=mod -deps ./cmd/flux >"$dir/list.log" 2>&1) \
    || (cd "$dir/src" && go mod tidy -e >"$dir/tidy.log" 2>&1) \
    || { cat "$dir/list.log" "$dir/tidy.log" >&2; die "resolving the dependencies of flux $version failed"; }
  local out="$dir/out"
  mkdir -p "$out"
  (cd "$dir/src" && CGO_ENABLED=0 timed "go build flux $version" go build -mod=mod -trimpath \
    -ldflags "-s -w -X main.VERSION=${version#v}" -o "$out/flux" ./cmd/flux) \
    || die "building flux $version failed"
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
# github.com/fluxcd/pkg/artifact v0.18.3 (required by source-controller v1.9.5)
# is refused by the module proxy; v0.18.0 builds and works. The replace names
# the refused version, so it has no effect once a newer one is required.
if wants_tool source-controller; then
  build_controller source-controller github.com/fluxcd/source-controller "$FLUX_SOURCE_CONTROLLER_VERSION" \
    "github.com/fluxcd/pkg/artifact v0.18.3 => github.com/fluxcd/pkg/artifact v0.18.0"
fi
if wants_tool notification-controller; then
  build_controller notification-controller github.com/fluxcd/notification-controller "$NOTIFICATION_CONTROLLER_VERSION"
fi
if wants_tool flux; then
  build_flux_cli
fi
