#!/usr/bin/env bash
# Installs the build and test dependencies (Debian 12) when any is missing, then configures
# a Release build in build/ and builds the mpt binary (build/mpt) only: the tests, benchmarks
# and fuzzers are built by scripts/test.sh or `cmake --build build`. Safe to run again: with
# everything installed it skips apt and only brings the build up to date.
#
#   scripts/setup.sh [--configure-only]   (MPT_JOBS=N to set build parallelism; default: nproc)
#
# --configure-only stops before the build (scripts/test.sh builds every target at once, which
# keeps both cores busy where the mpt binary's one large unit would leave one idle).
#
# MPT_ETHEREUM_TESTS=DIR (an ethereum/tests checkout) and MPT_EXECUTION_APIS=DIR (an
# execution-apis tests folder), when set, configure build/ with them (CMakeLists.txt), so that
# the tests run on that data as well; unset, build/ keeps what it was configured with.
set -euo pipefail

configure_only=0
case ${1:-} in
    "") ;;
    --configure-only) configure_only=1 ;;
    *)
        echo "usage: scripts/setup.sh [--configure-only]" >&2
        exit 2
        ;;
esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# clang builds the fuzzers (scripts/fuzz.sh); libclang-rt-14-dev holds libFuzzer and clang's
# sanitizer runtimes, which the clang packages only recommend; clang-format-14 and clang-tidy-14 are the
# versions scripts/check-format.sh and scripts/clang-tidy.sh expect; graphviz renders
# mpt tree --dot in the CLI test; jq and python3 take recorded JSON-RPC answers and fixtures
# apart in the test scripts; zsh and fish check the completion scripts mpt makes for them;
# pkgconf builds the example against the installed library's mpt.pc; man-db reads the
# manual pages the Debian package installs; python3-jsonschema checks the CLI's JSON against
# docs/json.
packages=(
    build-essential cmake libcli11-dev libfmt-dev nlohmann-json3-dev libsqlite3-dev
    doctest-dev libbenchmark-dev libssl-dev sqlite3 hyperfine valgrind clang time
    groff-base libclang-rt-14-dev clang-format-14 clang-tidy-14 graphviz jq python3
    zsh fish pkgconf man-db python3-jsonschema
)

installed() {
    # dpkg -s also succeeds for removed packages whose config files remain; ask for the state.
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for p in "${packages[@]}"; do
        installed "$p" || missing+=("$p")
    done
else
    echo "setup: dpkg-query not found; this script installs packages on Debian 12 only." >&2
    echo "setup: install these by hand, then run it again: ${packages[*]}" >&2
    exit 2
fi

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
        exit 2
    fi
    echo "setup: installing: ${missing[*]}"
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
fi

data=()
[ -z "${MPT_ETHEREUM_TESTS:-}" ] || data+=("-DMPT_ETHEREUM_TESTS=$MPT_ETHEREUM_TESTS")
[ -z "${MPT_EXECUTION_APIS:-}" ] || data+=("-DMPT_EXECUTION_APIS=$MPT_EXECUTION_APIS")
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DMPT_UNITY_CLI=ON -DMPT_UNITY_TESTS=ON "${data[@]}" \
    >/dev/null
[ $configure_only -eq 1 ] || cmake --build "$root/build" -j "${MPT_JOBS:-$(nproc)}" --target mpt
