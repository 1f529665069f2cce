#!/usr/bin/env bash
# Runs the real binary on fixtures and checks stdout, stderr and the exit code.
#   cli_test.sh MPT FIXTURES GEN    (GEN: the mpt_gen_kv data generator)
set -u
if [ $# -ne 3 ]; then
    echo "usage: cli_test.sh MPT FIXTURES GEN" >&2
    exit 2
fi
MPT=$1
FIX=$2
GEN=$3
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect NAME EXIT STDOUT_PATTERN STDERR_PATTERN -- CMD...
expect() {
    local name=$1 code=$2 out_re=$3 err_re=$4
    shift 5
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local rc=$?
    local ok=1
    [ "$rc" -eq "$code" ] || ok=0
    # '^$' means the stream must be empty; anything else is a pattern some line must match.
    match() {
        if [ "$1" = '^$' ]; then [ ! -s "$2" ]; else grep -Eq -- "$1" "$2"; fi
    }
    match "$out_re" "$tmp/out" || ok=0
    match "$err_re" "$tmp/err" || ok=0
    # Every error is exactly one line.
    if [ "$code" -ge 2 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then ok=0; fi
    if [ $ok -eq 1 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: exit $rc (want $code)"
        echo "  stdout: $(head -c 300 "$tmp/out")"
        echo "  stderr: $(head -c 300 "$tmp/err")"
    fi
}

. "$(dirname "$0")/cli_cases.sh"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
