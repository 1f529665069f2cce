#!/usr/bin/env bash
# Runs the real binary on fixtures and checks stdout, stderr and the exit code.
#   cli_test.sh MPT FIXTURES GEN [ETHEREUM_TESTS]    (GEN: the mpt_gen_kv data generator;
#   ETHEREUM_TESTS: a checkout of ethereum/tests, whose BlockchainTests allocations are then
#   also read past --memory)
set -u
if [ $# -ne 3 ] && [ $# -ne 4 ]; then
    echo "usage: cli_test.sh MPT FIXTURES GEN [ETHEREUM_TESTS]" >&2
    exit 2
fi
MPT=$1
FIX=$2
GEN=$3
ETHEREUM_TESTS=${4:-}
if [ -n "$ETHEREUM_TESTS" ] && [ ! -d "$ETHEREUM_TESTS/BlockchainTests" ]; then
    echo "cli_test.sh: $ETHEREUM_TESTS/BlockchainTests not found" >&2
    exit 2
fi
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/expect.sh"

. "$(dirname "$0")/cli_cases.sh"
. "$(dirname "$0")/cli_state_cases.sh"
. "$(dirname "$0")/getproof_cases.sh"
. "$(dirname "$0")/stream_cases.sh"
. "$(dirname "$0")/state_cases.sh"
. "$(dirname "$0")/cli_flags_cases.sh"
. "$(dirname "$0")/tries_cases.sh"
. "$(dirname "$0")/statefix_cases.sh"
. "$(dirname "$0")/spill_cases.sh"
. "$(dirname "$0")/statespill_cases.sh"
. "$(dirname "$0")/state_guard_cases.sh"
. "$(dirname "$0")/readme_cases.sh"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
