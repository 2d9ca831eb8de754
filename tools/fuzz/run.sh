#!/usr/bin/env bash
# Runs one native fuzz target: run.sh GO FUZZTIME PKGDIR TARGET.
#
# Go's fuzzing coordinator can end a time-bounded run with "context deadline
# exceeded" when a worker is still busy as the time runs out, with no failing
# input found. Such a run is tried once more; a run that found an input (Go
# writes it under testdata/fuzz/ and says "Failing input written") or failed
# any other way fails at once.
set -uo pipefail
go=$1 fuzztime=$2 dir=$3 target=$4
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in 1 2; do
  "$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./$dir" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] && exit 0
  if grep -q 'Failing input written' "$log" || ! grep -q 'context deadline exceeded' "$log"; then
    exit "$status"
  fi
  [ "$attempt" -eq 2 ] && exit "$status"
  echo "fuzz: $target ended on the coordinator's deadline with no failing input; trying it once more" >&2
done
