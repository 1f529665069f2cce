#!/usr/bin/env bash
# Runs the real binary on fixtures and checks stdout, stderr and the exit code: the CLI cases,
# in groups, each sourced in a scratch folder of its own, its cases in order: a case may use
# files an earlier one of its group made. A group is tests/<group>_cases.sh, and for the group
# cli the files that use what cli_cases.sh makes after it.
#
#   cli_test.sh MPT FIXTURES GEN [ETHEREUM_TESTS]
#       every group, one after the other; prints each failure and "N passed, M failed"
#   cli_test.sh --group GROUP --results FILE MPT FIXTURES GEN [ETHEREUM_TESTS]
#       one group; each case's outcome is appended to FILE (tests/expect.sh, case_result), and
#       what its runs of MPT print is kept in FILE's folder, outputs/GROUP/, whose file done
#       says the group ran to its end (tests/expect.sh, OUTPUT_CAPTURE)
#       Exits 0 when the group ran to its end, whatever its cases gave, so that ctest still
#       runs each case's entry; 1 when two of its cases share a name, or when FILE's folder
#       holds the group's list (below) and the cases run are not the ones listed
#   cli_test.sh --ctest DIR MPT FIXTURES GEN [ETHEREUM_TESTS]
#       lists the cases of every group without running them (the binaries stubbed) into
#       DIR/<group>.list, and writes DIR/cases.cmake: the ctest entry of each group,
#       cli/<group>, which runs it into DIR/<group>.results, and of each case,
#       cli/<group>/<case name>, which reports what that run recorded (tests/cli_case.sh), and
#       cli/json-schemas, which checks the JSON the groups printed against docs/json
#       (scripts/check-json-schemas.py)
#
# GEN: the mpt_gen_kv data generator. ETHEREUM_TESTS: a checkout of ethereum/tests, whose
# BlockchainTests allocations are then also read past --memory.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The groups, in the order a whole run takes them; the longest first, so that ctest starts
# them first.
groups=(statespill_bc cli statespill state_guard tries stream spill statefix state witness progress readme)

mode=all
group=
cli_out=
case ${1:-} in
--group)
    mode=group
    group=${2:-}
    [ "${3:-}" = --results ] || { echo "usage: cli_test.sh --group GROUP --results FILE MPT FIXTURES GEN [ETHEREUM_TESTS]" >&2; exit 2; }
    cli_out=${4:-}
    shift 4
    ;;
--ctest)
    mode=ctest
    cli_out=${2:-}
    shift 2
    ;;
esac
if [ $# -ne 3 ] && [ $# -ne 4 ]; then
    echo "usage: cli_test.sh [--group GROUP --results FILE | --ctest DIR] MPT FIXTURES GEN [ETHEREUM_TESTS]" >&2
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
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

. "$here/expect.sh"

# run_group GROUP: sources the group's cases in a scratch folder of its own.
run_group() {
    tmp=$scratch/$1
    mkdir -p "$tmp"
    local f files=$1
    [ "$1" != cli ] || files="cli cli_state getproof cli_flags"
    for f in $files; do
        . "$here/${f}_cases.sh"
    done
}

case $mode in
all)
    for g in "${groups[@]}"; do
        run_group "$g"
    done
    echo "$pass passed, $fail failed"
    [ $fail -eq 0 ]
    ;;
group)
    [ -f "$here/${group}_cases.sh" ] || { echo "cli_test.sh: no group $group ($here/${group}_cases.sh)" >&2; exit 2; }
    mkdir -p "$(dirname "$cli_out")"
    : >"$cli_out"
    outputs=$(dirname "$cli_out")/outputs/$group
    rm -rf "$outputs"
    mkdir -p "$outputs"
    CASE_RESULTS=$cli_out OUTPUT_CAPTURE=$outputs run_group "$group"
    : >"$outputs/done"
    echo "$group: $pass passed, $fail failed"
    bad_names=$(cut -f2 "$cli_out" | grep -F -e ';' -e ']==]')
    if [ -n "$bad_names" ]; then
        echo "cli_test.sh: cases of $group whose names hold ';' or ']==]', which a ctest name cannot:" $bad_names >&2
        exit 1
    fi
    dups=$(cut -f2 "$cli_out" | sort | uniq -d)
    if [ -n "$dups" ]; then
        echo "cli_test.sh: cases of $group that share a name (ctest tells cases by name):" $dups >&2
        exit 1
    fi
    list=$(dirname "$cli_out")/$group.list
    if [ -f "$list" ] && ! diff <(sort "$list") <(cut -f2 "$cli_out" | sort) >"$scratch/list.diff"; then
        echo "cli_test.sh: the cases of $group are not the ones its list holds ('<' listed only, '>' run only; list again: ctest does):" >&2
        cat "$scratch/list.diff" >&2
        exit 1
    fi
    exit 0
    ;;
ctest)
    # The binaries stubbed: the setup between cases runs as it is, in no time, and only the
    # names the cases would take are recorded. The real binary still answers --help and
    # --commands, which some groups take their case names from.
    stub=$scratch/stub
    mkdir -p "$stub"
    printf '#!/bin/sh\ncase "$1" in --help | --commands) exec "%s" "$@" ;; esac\nexit 0\n' "$MPT" >"$stub/mpt"
    printf '#!/bin/sh\nexit 0\n' >"$stub/mpt_gen_kv"
    printf '#!/bin/sh\nexit 0\n' >"$stub/mpt_gen_state"
    chmod +x "$stub"/*
    mkdir -p "$cli_out"
    cmake_file=$cli_out/cases.cmake
    : >"$cmake_file.new"
    for g in "${groups[@]}"; do
        : >"$cli_out/$g.list"
        (
            MPT=$stub/mpt
            GEN=$stub/mpt_gen_kv
            sleep() { :; }
            # No case reads a FIFO while listing: a writer to one would wait for ever.
            mkfifo() {
                local f
                for f; do : >"$f"; done
            }
            CASE_LIST=$cli_out/$g.list run_group "$g"
        ) </dev/null >/dev/null 2>&1
        {
            printf 'add_test([==[cli/%s]==] "%s/cli_test.sh" --group %s --results "%s/%s.results" "%s" "%s" "%s" "%s")\n' \
                "$g" "$here" "$g" "$cli_out" "$g" "$MPT" "$FIX" "$GEN" "$ETHEREUM_TESTS"
            printf 'set_tests_properties([==[cli/%s]==] PROPERTIES FIXTURES_SETUP cli_%s COST %d)\n' \
                "$g" "$g" "$(wc -l <"$cli_out/$g.list")"
            # A name twice is one entry, and a name ctest cannot hold none: the group's run
            # fails on either.
            sort -u "$cli_out/$g.list" | grep -v -F -e ';' -e ']==]' | while IFS= read -r name; do
                printf 'add_test([==[cli/%s/%s]==] "%s/cli_case.sh" "%s/%s.results" [==[%s]==])\n' \
                    "$g" "$name" "$here" "$cli_out" "$g" "$name"
                printf 'set_tests_properties([==[cli/%s/%s]==] PROPERTIES FIXTURES_REQUIRED cli_%s)\n' \
                    "$g" "$name" "$g"
            done
        } >>"$cmake_file.new"
    done
    # Every JSON output of the cases against its command's schema (docs/json), once the groups
    # ran.
    fixtures=$(printf 'cli_%s;' "${groups[@]}")
    {
        printf 'add_test([==[cli/json-schemas]==] python3 "%s/../scripts/check-json-schemas.py" "%s" "%s/../docs/json" "%s/outputs" %s)\n' \
            "$here" "$MPT" "$here" "$cli_out" "${groups[*]}"
        printf 'set_tests_properties([==[cli/json-schemas]==] PROPERTIES FIXTURES_REQUIRED [==[%s]==])\n' \
            "${fixtures%;}"
    } >>"$cmake_file.new"
    mv "$cmake_file.new" "$cmake_file"
    ;;
esac
