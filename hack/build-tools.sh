#!/usr/bin/env bash
# Builds the tools the Makefile runs (controller-gen for `make manifests`,
# cyclonedx-gomod for `make release`,
# golangci-lint for `make lint` and `make vet`, promtool for
# `make monitoring-test`) from the Go module proxy with
# `go install`, into the user cache and bin/<tool>/<version>/, as the other
# hack/build-*.sh scripts do. Arguments name the tools to build (default: all),
# so `make lint` builds golangci-lint only: bash hack/build-tools.sh golangci-lint
#
# The versions live here rather than in hack/versions.env because they pin
# build tools, not part of the test control plane that internal/testenv reads.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# controller-gen: v0.23.0 is the newest release on the proxy, built against
# k8s.io v0.37 (as go.mod) and requiring go >= 1.26.0. Bump it together with
# k8s.io/* and regenerate with `make manifests`. The Makefile reads this line
# (keep it a plain NAME=value assignment).
CONTROLLER_GEN_VERSION=v0.23.0

# golangci-lint: v2.15.0 builds with go1.26.8 and understands Go 1.26 code.
# Its config is .golangci.yml (v2 format). A linter must be built with a Go at
# least as new as the code it checks: bump it when go.mod's go line moves.
# The Makefile reads this line (keep it a plain NAME=value assignment).
GOLANGCI_LINT_VERSION=v2.15.0

# promtool: Prometheus' rule checker and rule unit tester, from the
# github.com/prometheus/prometheus module, whose versions v0.MNN.P are
# Prometheus releases M.NN.P (v0.316.0 is Prometheus 3.16.0, the newest on the
# proxy). The module has no replace directives, so `go install` builds it.
# The Makefile reads this line (keep it a plain NAME=value assignment).
PROMTOOL_VERSION=v0.316.0

# cyclonedx-gomod: writes the CycloneDX SBOMs of `make release` from the
# binaries' build information (its `bin` command). v1.10.0 is the newest on
# the proxy. The Makefile reads this line (keep it a plain NAME=value
# assignment).
CYCLONEDX_GOMOD_VERSION=v1.10.0

# prometheus_release MODULE_VERSION : the Prometheus release of a
# github.com/prometheus/prometheus module version (v0.316.0 -> 3.16.0).
prometheus_release() {
  local v=${1#v0.}
  local mnn=${v%%.*}
  echo "${mnn:0:1}.$((10#${mnn:1})).${v#*.}"
}

# build_tool NAME VERSION PACKAGE COLD VERSION_CMD... : go install PACKAGE@VERSION
# unless bin/NAME/VERSION/NAME is cached, check that VERSION_CMD prints VERSION
# (without its leading v), and publish it. TOOL_LDFLAGS adds linker flags (a
# version stamp), TOOL_TAGS build tags, and TOOL_REPORTS replaces what
# VERSION_CMD must print.
build_tool() {
  local name=$1 version=$2 pkg=$3 cold=$4; shift 4
  local reports=${TOOL_REPORTS:-${version#v}}
  if claim "$name" "$version" "$name"; then
    log "$name $version: already built ($BIN_DIR/$name/$version)"
    return 0
  fi
  log "Building $name $version from the module proxy (cold: $cold)"
  local work out
  work="$(mktemp -d "${TMPDIR:-/tmp}/tdc-tools.XXXXXX")"
  out="$work/out"
  mkdir -p "$out"
  # Outside the repository, so go.mod of this module plays no part; GOFLAGS is
  # cleared so a caller's -mod=vendor cannot break `go install pkg@version`.
  (cd "$work" && GOBIN="$out" GOFLAGS= CGO_ENABLED=0 timed "go install $name" \
    go install -trimpath -tags "${TOOL_TAGS:-}" -ldflags "-s -w ${TOOL_LDFLAGS:-}" "$pkg@$version") \
    || { rm -rf "$work"; die "building $name $version failed"; }
  local reported
  reported="$("$out/$name" "$@" 2>&1)" || true
  grep -qF "$reports" <<<"$reported" \
    || { rm -rf "$work"; die "$name does not report $reports: $reported"; }
  publish "$name" "$version" "$out"
  rm -rf "$work"
  log "$name $version ready in $BIN_DIR/$name/$version"
}

tools=("$@")
[[ ${#tools[@]} -gt 0 ]] || tools=(controller-gen golangci-lint promtool cyclonedx-gomod)
for tool in "${tools[@]}"; do
  case "$tool" in
    controller-gen)
      build_tool controller-gen "$CONTROLLER_GEN_VERSION" \
        sigs.k8s.io/controller-tools/cmd/controller-gen "1-3 min" --version ;;
    golangci-lint)
      build_tool golangci-lint "$GOLANGCI_LINT_VERSION" \
        github.com/golangci/golangci-lint/v2/cmd/golangci-lint "3-6 min" version ;;
    promtool)
      # go install stamps no version; stamp the release as Prometheus' own
      # build does, so --version can be checked. remove_all_sd leaves out
      # Prometheus' service discovery plugins (the cloud SDKs), which only
      # `promtool check config` and `promtool sd` use: measured on 2 shared
      # cores, 512 s of CPU instead of about 1,200 s, a 54 MB binary instead
      # of 88 MB.
      release=$(prometheus_release "$PROMTOOL_VERSION")
      TOOL_REPORTS="version $release" TOOL_TAGS=remove_all_sd \
        TOOL_LDFLAGS="-X github.com/prometheus/common/version.Version=$release" \
        build_tool promtool "$PROMTOOL_VERSION" \
        github.com/prometheus/prometheus/cmd/promtool "5-10 min" --version ;;
    cyclonedx-gomod)
      build_tool cyclonedx-gomod "$CYCLONEDX_GOMOD_VERSION" \
        github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod "1-3 min" version ;;
    *) die "unknown tool $tool (known: controller-gen golangci-lint promtool cyclonedx-gomod)" ;;
  esac
done
