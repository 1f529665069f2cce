#!/usr/bin/env bash
# Runs clang-tidy 14 (the checks of .clang-tidy; cmd/.clang-tidy leaves one out there) over
# every tracked .cpp of lib/ and cmd/, the headers of both included, MPT_JOBS units at a time
# (default: nproc). Prints each finding and exits 1 when there is any (the config makes every
# warning an error), 2 when clang-tidy, the build folder or a file's compile command is missing.
#
#   scripts/clang-tidy.sh [BUILD_DIR]
#
# BUILD_DIR must hold the compile_commands.json of a build configured with
# -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; by default the script configures build-tidy/ so itself,
# with MPT_UNITY_CLI, and nothing is compiled. In a build with MPT_UNITY_CLI, cmd/ is checked
# as the one unit the build compiles: its files share headers (CLI11, fmt, nlohmann/json) that
# cost clang-tidy some 13 s per file, 20 s for all of them at once. Each cmd/ file must then
# also compile alone, with what it includes itself, as the build without MPT_UNITY_CLI compiles
# it: the script checks that too (syntax only, with the unit's compiler and flags). The
# library is checked likewise in its layers' units of six files (MPT_UNITY_LIB), which share
# the parsing of their headers (the witness layer 13.8 -> 5.8 s); that each library file
# compiles alone is the build's part (build/ compiles them one by one).
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
    cmake -S "$root" -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DMPT_UNITY_CLI=ON \
        -DMPT_UNITY_LIB=ON -DMPT_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null ||
        die "configure failed"
fi
command -v python3 >/dev/null || die "python3 not found (it reads compile_commands.json)"

files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(git ls-files -z -- 'lib/*.cpp' 'cmd/*.cpp')
[ ${#files[@]} -gt 0 ] || die "no tracked .cpp files under lib/ or cmd/"
# The unit that includes cmd/'s files in a unity build, and its compile command without its
# output and input (the shell words of compile_commands.json's "command").
unity=
compile=
{ IFS= read -r unity && IFS= read -r compile; } < <(python3 -c '
import json, shlex, sys
for e in json.load(open(sys.argv[1])):
    if "/Unity/" in e["file"] and "/mpt.dir/" in e["file"]:
        words = shlex.split(e["command"])
        drop = {i for i, w in enumerate(words) if w in ("-o", "-c")}
        drop |= {i + 1 for i in drop}
        print(e["file"])
        print(" ".join(shlex.quote(w) for i, w in enumerate(words) if i not in drop))
        break' "$build/compile_commands.json")
# The library layers' unity units, when the build has them.
lib_units=()
while IFS= read -r u; do lib_units+=("$u"); done < <(python3 -c '
import json, sys
for e in json.load(open(sys.argv[1])):
    if "/Unity/" in e["file"] and "/mpt.dir/" not in e["file"]:
        print(e["file"])' "$build/compile_commands.json")
# The units to check: every file with its own compile command, the unity unit of cmd/, and the
# library's units that include a file. Every file must be one of these: one missing from
# CMakeLists.txt would otherwise be checked with guessed flags, or not at all.
units=()
alone=()
declare -A lib_unit_used=()
missing=0
for f in "${files[@]}"; do
    lib_unit=
    if [[ $f == lib/* ]] && [ ${#lib_units[@]} -gt 0 ]; then
        lib_unit=$(grep -lF "#include \"$root/$f\"" "${lib_units[@]}" | head -n 1)
    fi
    if grep -qF "\"file\": \"$root/$f\"" "$build/compile_commands.json"; then
        units+=("$f")
    elif [ -n "$unity" ] && [[ $f == cmd/* ]] && grep -qF "#include \"$root/$f\"" "$unity"; then
        alone+=("$f")
    elif [ -n "$lib_unit" ]; then
        lib_unit_used[$lib_unit]=1
    else
        echo "clang-tidy: $f: no compile command in $build/compile_commands.json" >&2
        missing=1
    fi
done
[ $missing -eq 0 ] || die "files above are not in the build (listed in CMakeLists.txt?)"
[ ${#alone[@]} -eq 0 ] || units+=("$unity")
[ ${#lib_unit_used[@]} -eq 0 ] || units+=("${!lib_unit_used[@]}")

logs=$(mktemp -d "${TMPDIR:-/tmp}/mpt-tidy.XXXXXX")
trap 'rm -rf "$logs"' EXIT
start=$(date +%s)
# cmd/.clang-tidy's checks, which the unity unit (outside cmd/) would not find, and the
# includes of .cpp files that make it.
cmd_checks=$(sed -n "s/^Checks: *'\(.*\)'\$/\1/p" "$root/cmd/.clang-tidy"),-bugprone-suspicious-include
# One clang-tidy per unit, one compile per cmd/ file alone; each log is named after its file.
# Exit codes are read from the logs' companions, since xargs only says that some invocation
# failed.
# shellcheck disable=SC2016  # the inner script expands its own arguments
{
    printf 'tidy\t%s\0' "${units[@]}"
    [ ${#alone[@]} -eq 0 ] || printf 'alone\t%s\0' "${alone[@]}"
} | xargs -0 -P "${MPT_JOBS:-$(nproc)}" -I{} sh -c '
    kind=${3%%	*}
    f=${3#*	}
    log="$2/$kind-$(printf %s "$f" | tr / _)"
    if [ "$kind" = alone ]; then
        eval "$6 -fsyntax-only $f" >"$log" 2>&1
    elif [ "$f" = "$4" ]; then
        "$0" -p "$1" --quiet --config-file="$7/.clang-tidy" --checks="$5" "$f" >"$log" 2>&1
    elif [ "${f#*/Unity/}" != "$f" ]; then
        "$0" -p "$1" --quiet --config-file="$7/.clang-tidy" \
            --checks=-bugprone-suspicious-include "$f" >"$log" 2>&1
    else
        "$0" -p "$1" --quiet "$f" >"$log" 2>&1
    fi
    echo $? >"$log.rc"' "$tidy" "$build" "$logs" {} "$unity" "$cmd_checks" "$compile" "$root"
took=$(($(date +%s) - start))

failed=0
checked=()
for u in "${units[@]}"; do checked+=("tidy	$u"); done
for f in "${alone[@]}"; do checked+=("alone	$f"); done
for c in "${checked[@]}"; do
    kind=${c%%	*}
    f=${c#*	}
    log="$logs/$kind-$(printf %s "$f" | tr / _)"
    rc=$(cat "$log.rc" 2>/dev/null || echo missing)
    if [ "$rc" != 0 ] || grep -qE '(warning|error):' "$log"; then
        failed=$((failed + 1))
        [ "$kind" = alone ] && echo "== $f, compiled alone (exit $rc)" || echo "== $f (exit $rc)"
        grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$log"
    fi
done
what="${#files[@]} files of lib/ and cmd/ in ${#units[@]} units"
[ ${#alone[@]} -eq 0 ] || what="$what, and ${#alone[@]} of cmd/ compiled alone"
if [ $failed -ne 0 ]; then
    echo "clang-tidy: findings in $failed of ${#checked[@]} checks of $what (${took}s); distinct ones:"
    cat "$logs"/* | grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error):' | sed "s|^$root/||" | sort -u
    exit 1
fi
echo "clang-tidy: $what, no findings (${took}s, $("$tidy" --version | sed -n 's/.*version //p'))"
