#!/usr/bin/env bash
# Shared helpers for the provisioning scripts in hack/.
#
# Binaries are built once per version into a user cache outside the clone
# (TDC_CACHE_DIR, default ~/.cache/template-drift-controller) so that a fresh
# clone on the same machine reuses them, then linked into the repository's
# ignored bin/<tool>/<version>/ folder that Makefile and tests use.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TDC_CACHE_DIR="${TDC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/template-drift-controller}"
BIN_DIR="${BIN_DIR:-$REPO_ROOT/bin}"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# install_cached TOOL VERSION FILE... : succeed (return 0) when every FILE for
# TOOL@VERSION is already in bin/, linking it from the user cache if needed.
have_cached() {
  local tool=$1 version=$2; shift 2
  local dst="$BIN_DIR/$tool/$version" src="$TDC_CACHE_DIR/bin/$tool/$version" f
  for f in "$@"; do
    if [[ ! -x "$dst/$f" ]]; then
      [[ -x "$src/$f" ]] || return 1
      mkdir -p "$dst"
      ln -f "$src/$f" "$dst/$f" 2>/dev/null || cp -f "$src/$f" "$dst/$f"
    fi
  done
  return 0
}

# publish TOOL VERSION DIR : move the binaries built in DIR into the user
# cache atomically, then link them into bin/.
publish() {
  local tool=$1 version=$2 dir=$3
  local src="$TDC_CACHE_DIR/bin/$tool/$version"
  mkdir -p "$(dirname "$src")"
  rm -rf "$src.tmp" && mv "$dir" "$src.tmp" && rm -rf "$src" && mv "$src.tmp" "$src"
  local f
  for f in "$src"/*; do have_cached "$tool" "$version" "$(basename "$f")"; done
}

# timed NAME CMD... : run CMD and log how long it took.
timed() {
  local name=$1; shift
  local start=$SECONDS
  "$@"
  log "$name took $((SECONDS - start))s"
}

# shellcheck source=hack/versions.env
source "$REPO_ROOT/hack/versions.env"
