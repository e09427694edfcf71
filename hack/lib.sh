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

# claim TOOL VERSION FILE... : succeed when every FILE for TOOL@VERSION is in
# bin/ or the user cache (as have_cached). Otherwise take TOOL@VERSION's build
# lock, waiting while another process builds it (CI builds the tools in the
# background while its first steps run), and succeed if that process built
# it; fail, holding the lock, when the caller must build it itself. publish
# releases the lock, and so does the script's exit (a failed build), so a
# build that failed elsewhere is tried again here.
CLAIM_FD=
claim() {
  local tool=$1 version=$2
  have_cached "$@" && return 0
  command -v flock >/dev/null || return 1
  mkdir -p "$TDC_CACHE_DIR/locks"
  exec {CLAIM_FD}>"$TDC_CACHE_DIR/locks/$tool-$version.lock"
  if ! flock -n "$CLAIM_FD"; then
    log "$tool $version is being built by another process: waiting for it"
    flock "$CLAIM_FD"
  fi
  if have_cached "$@"; then
    release_claim
    return 0
  fi
  return 1
}

# release_claim : release the build lock claim took, if any.
release_claim() {
  if [[ -n $CLAIM_FD ]]; then
    exec {CLAIM_FD}>&-
    CLAIM_FD=
  fi
}

# publish TOOL VERSION DIR : move the binaries built in DIR into the user
# cache atomically, then link them into bin/, and release the build lock.
publish() {
  local tool=$1 version=$2 dir=$3
  local src="$TDC_CACHE_DIR/bin/$tool/$version"
  mkdir -p "$(dirname "$src")"
  rm -rf "$src.tmp" && mv "$dir" "$src.tmp" && rm -rf "$src" && mv "$src.tmp" "$src"
  local f
  for f in "$src"/*; do have_cached "$tool" "$version" "$(basename "$f")"; done
  release_claim
}

# prints TEXT CMD... : run CMD and report whether its output (stdout and
# stderr) contains TEXT. The output is read whole first: `CMD | grep -q`
# under pipefail fails when grep stops reading at the first match and CMD
# then dies of SIGPIPE while it still writes (etcd --version did, on a
# loaded machine).
prints() {
  local text=$1 out; shift
  out="$("$@" 2>&1)" || true
  grep -qF -- "$text" <<<"$out"
}

# timed NAME CMD... : run CMD and log how long it took, in wall time and in
# CPU time (user and system, its child processes included): the CPU is the
# build's cost, whatever else shares the machine.
timed() {
  local name=$1; shift
  local TIMEFORMAT="[time] $name took %0Rs (CPU %0Us user, %0Ss system)"
  time "$@"
}

# shellcheck source=hack/versions.env
source "$REPO_ROOT/hack/versions.env"
