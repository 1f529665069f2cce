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

. "$(dirname "$0")/expect.sh"

. "$(dirname "$0")/cli_cases.sh"
. "$(dirname "$0")/cli_state_cases.sh"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
