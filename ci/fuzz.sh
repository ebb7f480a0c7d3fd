#!/usr/bin/env bash
# Runs every fuzz target in the module for a while each: ci/fuzz.sh [FUZZTIME].
set -euo pipefail
fuzztime=${1:-20s}
cd "$(dirname "$0")/.."
targets=$(git grep -h -o -E '^func (Fuzz[A-Za-z0-9_]+)' -- '*_test.go' | wc -l)
if [ "$targets" -eq 0 ]; then
	echo "make fuzz: no fuzz targets have landed yet" >&2
	exit 1
fi
git grep -l -E '^func Fuzz' -- '*_test.go' | xargs -n1 dirname | sort -u | while read -r dir; do
	for name in $(grep -h -o -E '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go | awk '{print $2}'); do
		echo "== ./$dir $name ($fuzztime)"
		go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$dir"
	done
done
