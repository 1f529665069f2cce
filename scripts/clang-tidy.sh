#!/usr/bin/env bash
# Runs clang-tidy 14 (the checks of .clang-tidy; cmd/.clang-tidy leaves one out there) over
# every tracked .cpp of lib/ and cmd/, the headers of both included, MPT_JOBS files at a time
# (default: nproc). Prints each finding and exits 1 when there is any (the config makes every
# warning an error), 2 when clang-tidy, the build folder or a file's compile command is missing.
#
#   scripts/clang-tidy.sh [BUILD_DIR]
#
# BUILD_DIR must hold the compile_commands.json of a build configured with
# -DCMAKE_EXPORT_COMPILE_COMMANDS=ON and without MPT_UNITY_CLI (a unity build lists cmd/'s files
# as one). By default the script configures build-tidy/ so itself; nothing is compiled.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2

die() {
    echo "clang-tidy: error: $*" >&2
    exit 2
}

tidy=
for c in clang-tidy-14 clang-tidy; do
    if command -v "$c" >/dev/null 2>&1; then
        tidy=$c
        break
    fi
done
[ -n "$tidy" ] || die "clang-tidy not found (scripts/setup.sh installs clang-tidy-14)"

if [ $# -ge 1 ]; then
    build=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such build folder"
    [ -f "$build/compile_commands.json" ] ||
        die "$build/compile_commands.json not found (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"
else
    build=$root/build-tidy
    cmake -S "$root" -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DMPT_UNITY_CLI=OFF \
        -DMPT_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null || die "configure failed"
fi

files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(git ls-files -z -- 'lib/*.cpp' 'cmd/*.cpp')
[ ${#files[@]} -gt 0 ] || die "no tracked .cpp files under lib/ or cmd/"
# Every file must have its compile command: one missing from CMakeLists.txt would otherwise be
# checked with guessed flags, or not at all.
missing=0
for f in "${files[@]}"; do
    if ! grep -qF "\"file\": \"$root/$f\"" "$build/compile_commands.json"; then
        echo "clang-tidy: $f: no compile command in $build/compile_commands.json" >&2
        missing=1
    fi
done
[ $missing -eq 0 ] || die "files above are not in the build (listed in CMakeLists.txt? MPT_UNITY_CLI off?)"

logs=$(mktemp -d "${TMPDIR:-/tmp}/mpt-tidy.XXXXXX")
trap 'rm -rf "$logs"' EXIT
start=$(date +%s)
# One clang-tidy per file; its log is named after the file. Exit codes are read from the logs'
# companions, since xargs only says that some invocation failed.
# shellcheck disable=SC2016  # the inner script expands its own arguments
printf '%s\0' "${files[@]}" | xargs -0 -P "${MPT_JOBS:-$(nproc)}" -I{} sh -c '
    log="$2/$(printf %s "$3" | tr / _)"
    "$0" -p "$1" --quiet "$3" >"$log" 2>&1
    echo $? >"$log.rc"' "$tidy" "$build" "$logs" {}
took=$(($(date +%s) - start))

failed=0
for f in "${files[@]}"; do
    log="$logs/$(printf %s "$f" | tr / _)"
    rc=$(cat "$log.rc" 2>/dev/null || echo missing)
    if [ "$rc" != 0 ] || grep -qE '(warning|error):' "$log"; then
        failed=$((failed + 1))
        echo "== $f (exit $rc)"
        grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$log"
    fi
done
if [ $failed -ne 0 ]; then
    echo "clang-tidy: findings in $failed of ${#files[@]} files (${took}s); distinct ones:"
    cat "$logs"/* | grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error):' | sed "s|^$root/||" | sort -u
    exit 1
fi
echo "clang-tidy: ${#files[@]} files of lib/ and cmd/, no findings (${took}s, $("$tidy" --version | sed -n 's/.*version //p'))"
