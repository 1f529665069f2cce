#!/usr/bin/env bash
# Checks the installed library as another program uses it: cmake --install of BUILD_DIR into
# a scratch prefix, then examples/root_and_proof.cpp built against it twice, through
# find_package(mpt CONFIG) and through pkg-config, each run on a fixture: the root must be
# mpt root's, the proof valid, and the proof with a node changed invalid (exit 1).
#
#   scripts/install-check.sh [BUILD_DIR]    (default build/)
#
# Prints one line per check and "N passed, M failed"; exit 0 when all pass, 1 when one fails,
# 2 when a tool is missing.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
die() {
    echo "install-check: error: $*" >&2
    exit 2
}
[ -x "$build/mpt" ] || die "$build/mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v pkg-config >/dev/null || die "pkg-config not found"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { # NAME STATUS [WHY]
    if [ "$2" -eq 0 ]; then
        pass=$((pass + 1))
        echo "ok   $1"
    else
        fail=$((fail + 1))
        echo "FAIL $1${3:+: $3}"
    fi
}

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1
check "cmake --install" $? "$(tail -3 "$tmp/install.log")"
for f in include/mpt/ops/kv_root.hpp lib/cmake/mpt/mptConfig.cmake lib/pkgconfig/mpt.pc \
    lib/libmpt_core.a lib/libmpt_ops.a share/mpt/json/root.schema.json; do
    [ -f "$tmp/prefix/$f" ]
    check "installed $f" $?
done

kv=$root/fixtures/proof_trie.json
proof=$root/fixtures/proof_present.json
want="root $("$build/mpt" root "$kv")"
sed 's/"0xe230a0cc/"0xe230a0cd/' "$proof" >"$tmp/tampered.json"
run_example() { # NAME BINARY
    out=$("$2" "$kv" "$proof" 2>&1)
    rc=$?
    [ $rc -eq 0 ] && [ "$(echo "$out" | head -1)" = "$want" ] &&
        [[ $(echo "$out" | tail -1) == "valid 0xcccc"* ]]
    check "$1: the root and the proof" $? "exit $rc: $out"
    out=$("$2" "$kv" "$tmp/tampered.json" 2>&1)
    rc=$?
    [ $rc -eq 1 ] && [ "$(echo "$out" | tail -1)" = invalid ]
    check "$1: a changed proof node, invalid" $? "exit $rc: $out"
}

cmake -S "$root/examples" -B "$tmp/example" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    >"$tmp/cmake.log" 2>&1 && cmake --build "$tmp/example" >>"$tmp/cmake.log" 2>&1
check "find_package(mpt CONFIG): the example builds" $? "$(tail -5 "$tmp/cmake.log")"
[ -x "$tmp/example/root_and_proof" ] && run_example "find_package" "$tmp/example/root_and_proof"

flags=$(PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig pkg-config --cflags --libs mpt 2>&1)
check "pkg-config --cflags --libs mpt" $? "$flags"
# shellcheck disable=SC2086
${CXX:-c++} -O1 -o "$tmp/root_and_proof_pc" "$root/examples/root_and_proof.cpp" $flags \
    >"$tmp/cc.log" 2>&1
check "pkg-config: the example builds" $? "$(tail -5 "$tmp/cc.log")"
[ -x "$tmp/root_and_proof_pc" ] && run_example "pkg-config" "$tmp/root_and_proof_pc"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
