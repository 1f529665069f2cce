#!/usr/bin/env bash
# Makes the Debian package of a build (cpack -G DEB) and checks it as a user gets it: dpkg -i,
# then the installed mpt, its manual page and its completion for bash, zsh and fish, then
# dpkg -r, which must take it all away. Installs into the system: for CI, as root.
#
#   scripts/deb-check.sh [BUILD_DIR]    (default build/)
#
# Prints one line per check and "N passed, M failed"; exit 0 when all pass, 1 when one fails,
# 2 when not root, a tool is missing or mpt is installed already.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
die() {
    echo "deb-check: error: $*" >&2
    exit 2
}
[ "$(id -u)" -eq 0 ] || die "dpkg -i needs root"
[ -x "$build/mpt" ] || die "$build/mpt: not built (run scripts/setup.sh, or pass BUILD_DIR)"
command -v cpack >/dev/null || die "cpack not found"
command -v man >/dev/null || die "man not found"
! dpkg-query -W mpt >/dev/null 2>&1 || die "a package mpt is installed already"

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

rm -f "$build"/mpt_*.deb
out=$(cd "$build" && cpack -G DEB 2>&1)
check "cpack -G DEB" $? "$(echo "$out" | tail -3)"
deb=$(ls "$build"/mpt_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || die "no package made"

out=$(dpkg -i "$deb" 2>&1)
check "dpkg -i" $? "$out"
want=$("$build/mpt" root "$root/fixtures/dogs.json")
out=$(/usr/bin/mpt root "$root/fixtures/dogs.json" 2>&1)
[ "$out" = "$want" ]
check "the installed mpt: a root" $? "$out, want $want"
out=$(/usr/bin/mpt --version 2>&1)
[[ $out == "mpt 0."* ]]
check "the installed mpt: --version" $? "$out"
out=$(man -w mpt 2>&1)
[[ $out == /usr/share/man/man1/mpt.1* ]]
check "man mpt" $? "$out"
out=$(MANWIDTH=80 man mpt-root 2>/dev/null | grep -c 'mpt root')
[ "${out:-0}" -gt 0 ]
check "man mpt-root reads" $? "$out"
for f in bash-completion/completions/mpt zsh/vendor-completions/_mpt \
    fish/vendor_completions.d/mpt.fish; do
    [ -s "/usr/share/$f" ]
    check "completion /usr/share/$f" $?
done
out=$(bash -c '. /usr/share/bash-completion/completions/mpt && COMP_WORDS=(mpt rlp "") &&
    COMP_CWORD=2 && _mpt && echo "${COMPREPLY[*]}"' 2>&1)
[ "$out" = "decode encode" ]
check "bash completes mpt rlp" $? "$out"
[ -f /usr/include/mpt/ops/kv_root.hpp ] && [ -f /usr/lib/pkgconfig/mpt.pc ] ||
    [ -f /usr/lib/x86_64-linux-gnu/pkgconfig/mpt.pc ]
check "the library's headers and mpt.pc" $?
[ -s /usr/share/mpt/json/root.schema.json ]
check "the JSON Schemas" $?

out=$(dpkg -r mpt 2>&1)
check "dpkg -r" $? "$out"
[ ! -e /usr/bin/mpt ] && [ ! -e /usr/share/man/man1/mpt.1 ]
check "dpkg -r takes it away" $?

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
