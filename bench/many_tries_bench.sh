#!/usr/bin/env bash
# The cost of a file's many tries to a command that reads one: callgrind's instruction count
# of `mpt get --account` (and with --slot, one storage trie's row read too) on a state file of
# N accounts with one storage slot each, so N storage tries (`mpt_gen_state N N OUT --every 1 --code 0`). Only the rows
# of the tries table a command reads are validated, so the count should not grow with N.
#
#   bench/many_tries_bench.sh [N] [MPT]      # N defaults to 100000, MPT to build/mpt
#                                            # (mpt_gen_state is taken from beside it)
#
# The state document and the file are made once into bench/data/ and reused.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-100000}
mpt=${2:-$root/build/mpt}
case $n in
'' | *[!0-9]*)
    echo "many_tries_bench: error: N must be a whole number, got '$n'" >&2
    exit 2
    ;;
esac
command -v valgrind >/dev/null || {
    echo "many_tries_bench: error: valgrind not found (scripts/setup.sh installs it)" >&2
    exit 2
}
[ -x "$mpt" ] || {
    echo "many_tries_bench: error: $mpt is not an executable" >&2
    exit 2
}
data=$root/bench/data
mkdir -p "$data"
doc=$data/state_${n}_slot1.json
db=$data/state_${n}_slot1.db
gen=$(dirname "$mpt")/mpt_gen_state
[ -f "$doc" ] || "$gen" "$n" "$n" "$doc" --every 1 --code 0
[ -f "$db" ] || "$mpt" build --state "$doc" -o "$db" >/dev/null
address=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(next(iter(d.get("alloc", d))))' "$doc")
tries=$("$mpt" tries --names "$db" 2>/dev/null | wc -l) || tries="?"  # an mpt without tries
echo "$db: $tries tries"

instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : //p'
}
echo "get --account:          $(instructions "$mpt" get "$db" --account "$address") instructions"
echo "get --account --slot:   $(instructions "$mpt" get "$db" --account "$address" --slot 0x01) instructions"
