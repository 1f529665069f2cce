#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/, -DMPT_FUZZ=ON: AddressSanitizer and
# UndefinedBehaviorSanitizer included; -O1) and runs each for SECONDS, MPT_JOBS targets at a time
# (default: nproc), each on a copy of the committed seeds in fuzz/corpus/<target>/. The copies,
# the new corpus entries and any crash input stay in a temporary folder (printed); nothing is
# written into the repository. Copy a crash input into fuzz/corpus/<target>/ once its bug is
# fixed, so that the replay keeps checking it.
#
#   scripts/fuzz.sh SECONDS [TARGET...]     (a target per folder of fuzz/corpus/; default all)
#
# Prints one summary line per target. Exit 0 when no target found anything, 1 when one did
# (a crash, a failed check, a sanitizer report, an input running over FUZZ_TIMEOUT seconds,
# default 25, or running out of memory), 2 on a usage or build error.
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
# -O1 with line tables only, as libFuzzer's own guide suggests: it compiles faster than -O2 -g
# (bulk_build.cpp under the sanitizers: 10 s against 12.5 s).
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DMPT_FUZZ=ON -DMPT_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" >/dev/null ||
    die "configure failed"
names=()
for t in "${targets[@]}"; do names+=("mpt_fuzz_$t"); done
cmake --build "$build" -j "${MPT_JOBS:-$(nproc)}" --target "${names[@]}" >/dev/null ||
    die "build failed (run: cmake --build $build)"

jobs=${MPT_JOBS:-$(nproc)}
timeout=${FUZZ_TIMEOUT:-25}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "MPT_JOBS must be a positive integer, not '$jobs'"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "FUZZ_TIMEOUT must be a positive integer, not '$timeout'"
work=$(mktemp -d "${TMPDIR:-/tmp}/mpt-fuzz.XXXXXX")
echo "fuzz: corpus copies, new inputs and crash inputs go to $work"

# One target: its run on the copy of its seeds, and its summary line in $work/<target>/summary.
run_target() {
    local t=$1 dir=$work/$1
    mkdir -p "$dir/corpus" "$dir/crashes"
    cp -R "$root/fuzz/corpus/$t/." "$dir/corpus/"
    local seeds start rc took runs found new
    seeds=$(find "$dir/corpus" -type f | wc -l)
    start=$(date +%s)
    "$build/mpt_fuzz_$t" -max_total_time="$seconds" -timeout="$timeout" -print_final_stats=1 \
        -artifact_prefix="$dir/crashes/" "$dir/corpus" >"$dir/log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
    found=$(find "$dir/crashes" -type f | wc -l)
    new=$(($(find "$dir/corpus" -type f | wc -l) - seeds))
    if [ $rc -ne 0 ] || [ "$found" -ne 0 ]; then
        {
            echo "$t: FOUND after ${took}s (exit $rc): $(find "$dir/crashes" -type f | head -3 | tr '\n' ' ')"
            grep -m 5 -E 'ERROR|fuzz check failed|runtime error' "$dir/log" | sed 's/^/  /'
            echo "  log: $dir/log"
        } >"$dir/summary"
        return 1
    fi
    echo "$t: ${took}s, ${runs:-?} runs, ${new} new corpus entries, nothing found" >"$dir/summary"
}

status=0
pids=()
for t in "${targets[@]}"; do
    # At most $jobs runs at once: wait for the oldest before starting another.
    if [ ${#pids[@]} -ge "$jobs" ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    fi
    run_target "$t" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
for t in "${targets[@]}"; do
    cat "$work/$t/summary" 2>/dev/null || {
        echo "$t: no summary (the run did not finish)"
        status=1
    }
done
exit $status
