#!/usr/bin/env bash
# Runs every native Go fuzz target of the module for FUZZTIME each (default
# 10m), one after the other, and prints one row per target: package, target,
# executions, corpus entries found new in the run, and the result. A crash
# fails the run; Go then writes the failing input under the package's
# testdata/fuzz/<target>/, to commit as a regression case.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-10m}"
GO="${GO:-go}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
failed=0
rows=()
# Targets: every `func FuzzX(f *testing.F)` in a _test.go file, by package.
while IFS=: read -r file _ line; do
  name="$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")"
  pkg="./$(dirname "$file")"
  log="$out/$(tr '/.' '__' <<<"$pkg")-$name.log"
  echo "== $pkg $name (-fuzztime $FUZZTIME)"
  if "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" >"$log" 2>&1; then
    result=ok
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
