#!/usr/bin/env bash
# Runs every native Go fuzz target of the module for FUZZTIME each (default
# 10m), one after the other, and prints one row per target: package, target,
# executions, corpus entries found new in the run, and the result. A crash
# fails the run; Go then writes the failing input under the package's
# testdata/fuzz/<target>/, to commit as a regression case.
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" as -fuzztime expires, when a worker on a loaded machine misses
# the stop (a race in the coordinator, fixed in Go 1.27). Such a run found
# nothing: no failing input written, no panic, no test error. It is run once more, and
# counts as a failure only if it fails again; any other failure counts at
# once (deadline_flake).
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10m}"
GO="${GO:-go}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failed=0
rows=()
# deadline_flake reports whether the log at $1 is only the coordinator's
# deadline race: "context deadline exceeded", and nothing a finding prints.
deadline_flake() {
  grep -q 'context deadline exceeded' "$1" &&
    ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$1"
}
# Targets: every `func FuzzX(f *testing.F)` in a _test.go file, by package.
while IFS=: read -r file _ line; do
  name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")"
  pkg="./$(dirname "$file")"
  log="$out/$(tr '/.' '__' <<<"$pkg")-$name.log"
  echo "== $pkg $name (-fuzztime $FUZZTIME)"
  run() { "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; }
  if run; then
    result=ok
  elif deadline_flake "$log" && { echo "   a bare deadline at -fuzztime (the coordinator missed a worker's stop), nothing found: once more"; run; }; then
    result="ok (run twice)"
  else
    result=FAIL
    failed=1
    tail -40 "$log"
  fi
  # The last progress line carries the totals: "execs: N (..), new interesting: K (total: T)".
  last="$(grep -E '^fuzz: elapsed' "$log" | tail -1 || true)"
  execs="$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")"
  interesting="$(sed -nE 's/.*new interesting: ([0-9]+) \(total: ([0-9]+)\).*/\1 of \2/p' <<<"$last")"
  rows+=("$(printf '%-24s %-14s %12s %18s %s' "$pkg" "$name" "${execs:-?}" "${interesting:-?}" "$result")")
done < <(grep -rEn --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' internal cmd controllers 2>/dev/null | sort)
echo
printf '%-24s %-14s %12s %18s %s\n' PACKAGE TARGET EXECS "NEW (OF CORPUS)" RESULT
printf '%s\n' "${rows[@]}"
exit "$failed"
