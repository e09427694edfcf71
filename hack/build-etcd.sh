#!/usr/bin/env bash
# Builds etcd from go.etcd.io/etcd/server/v3 through the Go module proxy: a
# tiny main that calls etcdmain.Main, exactly what the upstream etcd binary does.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ETCD_VERSION="${ETCD_VERSION}"
if claim etcd "$ETCD_VERSION" etcd; then
  log "etcd $ETCD_VERSION: already built ($BIN_DIR/etcd/$ETCD_VERSION)"
  exit 0
fi

log "Building etcd $ETCD_VERSION from the module proxy (cold: about 1.5 min)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tdc-etcd.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cat >"$work/go.mod" <<GOMOD
module tdc.local/etcd

go $(go env GOVERSION | sed 's/^go//')

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
cat >"$work/main.go" <<'GO'
// Command etcd is the upstream etcd server, built from its Go module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
(cd "$work" && go mod tidy >"$work/tidy.log" 2>&1) || { cat "$work/tidy.log" >&2; die "go mod tidy for etcd failed"; }
out="$work/out"
mkdir -p "$out"
# etcd's version package reports the module version; GitSHA is stamped like upstream.
(cd "$work" && CGO_ENABLED=0 timed "go build etcd" go build -trimpath \
  -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=module-$ETCD_VERSION" -o "$out/etcd" .) \
  || die "building etcd $ETCD_VERSION failed"
prints "${ETCD_VERSION#v}" "$out/etcd" --version || die "etcd does not report ${ETCD_VERSION#v}"
publish etcd "$ETCD_VERSION" "$out"
log "etcd $("$BIN_DIR/etcd/$ETCD_VERSION/etcd" --version 2>&1 | sed -n 1p) ready in $BIN_DIR/etcd/$ETCD_VERSION"
