#!/usr/bin/env bash
# Builds kube-apiserver from the k8s.io/kubernetes module, through
# the Go module proxy. The module cannot be `go install`ed because its go.mod
# replaces every staging module with ./staging/src/..., so a throw-away tools
# module requires k8s.io/kubernetes and replaces each staging module with its
# published k8s.io/<module> v0.<minor>.<patch> tag.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KUBE_VERSION="${KUBE_VERSION}"
if claim kube "$KUBE_VERSION" kube-apiserver; then
  log "kube-apiserver $KUBE_VERSION: already built ($BIN_DIR/kube/$KUBE_VERSION)"
  exit 0
fi

log "Building kube-apiserver $KUBE_VERSION from the module proxy (cold: 4-9 min)"
staging="v0.${KUBE_VERSION#v1.}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tdc-kube.XXXXXX")"
trap 'rm -rf "$work"' EXIT

modjson="$(cd "$work" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION")" \
  || die "cannot download k8s.io/kubernetes@$KUBE_VERSION: $modjson"
gomod="$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<<"$modjson")"
[[ -f "$gomod" ]] || die "go.mod of k8s.io/kubernetes@$KUBE_VERSION not found"

{
  echo "module tdc.local/kubetools"
  echo
  echo "go $(go env GOVERSION | sed 's/^go//')"
  echo
  echo "godebug default=go1.26"
  echo
  echo "require k8s.io/kubernetes $KUBE_VERSION"
  echo
  grep -E '=> \./staging/src/' "$gomod" | awk -v v="$staging" '{print "replace " $1 " => " $1 " " v}' \
    | grep -v 'k8s.io/sample-cli-plugin'
} >"$work/go.mod"
cat >"$work/tools.go" <<'GO'
//go:build tools

package kubetools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
GO

(cd "$work" && go mod tidy -e >"$work/tidy.log" 2>&1) || { cat "$work/tidy.log" >&2; die "go mod tidy failed"; }

minor="${KUBE_VERSION#v1.}"; minor="${minor%%.*}"
date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
done
out="$work/out"
mkdir -p "$out"
(cd "$work" && CGO_ENABLED=0 timed "go build kube-apiserver" \
  go build -trimpath -ldflags "-s -w $ldflags" -o "$out/" \
  k8s.io/kubernetes/cmd/kube-apiserver) \
  || die "building kube-apiserver $KUBE_VERSION failed"
prints "$KUBE_VERSION" "$out/kube-apiserver" --version || die "kube-apiserver does not report $KUBE_VERSION"
publish kube "$KUBE_VERSION" "$out"
log "kube-apiserver $("$BIN_DIR/kube/$KUBE_VERSION/kube-apiserver" --version) ready in $BIN_DIR/kube/$KUBE_VERSION"
