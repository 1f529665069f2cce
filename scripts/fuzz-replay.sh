#!/usr/bin/env bash
# Runs the committed fuzz corpus (fuzz/corpus/<target>/, a target a folder there) through the
# replay runner of a build folder (mpt_fuzz_replay TARGET DIR): the regression check of every
# input the fuzzers were seeded with or found a bug with, in a plain or a sanitizer build.
#
#   scripts/fuzz-replay.sh [BUILD_DIR]     (default: build/)
#
# Prints "<target>: N inputs" per target. Exit 0 when every input passes, non-zero when a
# check fails or a sanitizer reports, 2 when the runner, a corpus folder or a folder's target
# in the runner is missing.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
status=0
targets=()
for d in "$root"/fuzz/corpus/*/; do targets+=("$(basename "$d")"); done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz-replay: error: no corpus under fuzz/corpus" >&2; exit 2; }
bin=$build/mpt_fuzz_replay
if [ ! -x "$bin" ]; then
    echo "fuzz-replay: error: $bin: not built" >&2
    exit 2
fi
for t in "${targets[@]}"; do
    "$bin" "$t" "$root/fuzz/corpus/$t"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "fuzz-replay: $t failed (exit $rc)" >&2
        [ $status -eq 0 ] && status=$rc
    fi
done
exit $status
