#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/, -DMPT_FUZZ=ON: AddressSanitizer and
# UndefinedBehaviorSanitizer included) and runs each for SECONDS, one after another, starting
# from the committed seeds in fuzz/corpus/<target>/. New corpus entries and crash inputs go to
# a temporary folder (printed), never into the repository; copy a crash input into
# fuzz/corpus/<target>/ once its bug is fixed, so that the replay keeps checking it.
#
#   scripts/fuzz.sh SECONDS [TARGET...]     (a target per folder of fuzz/corpus/; default all)
#
# Prints one summary line per target. Exit 0 when no target found anything, 1 when one did,
# 2 on a usage or build error.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
all=()
for d in "$root"/fuzz/corpus/*/; do all+=("$(basename "$d")"); done

die() {
    echo "fuzz: error: $*" >&2
    exit 2
}

[ $# -ge 1 ] || die "usage: scripts/fuzz.sh SECONDS [TARGET...]"
seconds=$1
shift
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "SECONDS must be a positive integer, not '$seconds'"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
for t in "${targets[@]}"; do
    [ -d "$root/fuzz/corpus/$t" ] || die "unknown target '$t' (targets: ${all[*]})"
done
command -v clang++ >/dev/null || die "clang++ not found (scripts/setup.sh installs clang)"

build=$root/build-fuzz
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DMPT_FUZZ=ON -DMPT_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || die "configure failed"
names=()
for t in "${targets[@]}"; do names+=("mpt_fuzz_$t"); done
cmake --build "$build" -j "${MPT_JOBS:-2}" --target "${names[@]}" >/dev/null ||
    die "build failed (run: cmake --build $build)"

work=$(mktemp -d "${TMPDIR:-/tmp}/mpt-fuzz.XXXXXX")
echo "fuzz: new corpus and crash inputs go to $work"
status=0
for t in "${targets[@]}"; do
    mkdir -p "$work/$t/corpus" "$work/$t/crashes"
    start=$(date +%s)
    # The first folder receives new inputs; the committed seeds are read only.
    "$build/mpt_fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$work/$t/crashes/" "$work/$t/corpus" "$root/fuzz/corpus/$t" \
        >"$work/$t/log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t/log" | tail -1)
    found=$(find "$work/$t/crashes" -type f | wc -l)
    new=$(find "$work/$t/corpus" -type f | wc -l)
    if [ $rc -ne 0 ] || [ "$found" -ne 0 ]; then
        status=1
        echo "$t: FOUND after ${took}s (exit $rc): $(find "$work/$t/crashes" -type f | head -3 | tr '\n' ' ')"
        grep -m 5 -E 'ERROR|fuzz check failed|runtime error' "$work/$t/log" | sed 's/^/  /'
        echo "  log: $work/$t/log"
    else
        echo "$t: ${took}s, ${runs:-?} runs, ${new} new corpus entries, nothing found"
    fi
done
exit $status
