# expect NAME EXIT STDOUT_RE STDERR_RE -- CMD..., for the shell tests (sourced): runs CMD
# with no input and counts a pass when its exit code is EXIT, no signal killed it, each stream
# matches its pattern ('^$': the stream must be empty; '.*': anything; else an extended
# regular expression some line matches), and an error (EXIT 2 or more) is one line
# 'mpt: error: ...' (another program's prefix in EXPECT_ERROR_PREFIX) naming no place twice in
# a row. Otherwise prints why and counts a failure. Uses the caller's $tmp, pass
# and fail.
#
# case_result NAME STATUS [WHY]: records a case that is not one command's run: a pass when
# STATUS is 0, else a failure saying WHY; returns 1 for a failure.
#
# With OUTPUT_CAPTURE set (a folder), what each run of $MPT prints on stdout is kept there for
# the JSON Schema check (scripts/check-json-schemas.py): N.out beside N.args, which holds the
# case's name, the exit code and the command's arguments, each ending in a NUL.
#
# Every case goes through case_result under its NAME, which is what the per-case ctest
# entries report (tests/cli_test.sh): with CASE_RESULTS set, each outcome is appended to that
# file as a line "pass<TAB>NAME" or "fail<TAB>NAME<TAB>WHY"; with CASE_LIST set, nothing
# runs and each NAME is appended to that file.
case_result() {
    local name=$1 status=$2 why=${3:-}
    if [ -n "${CASE_LIST:-}" ]; then
        printf '%s\n' "$name" >>"$CASE_LIST"
        return 0
    fi
    local rc=0
    if [ "$status" -eq 0 ]; then
        pass=$((pass + 1))
        [ -z "${CASE_RESULTS:-}" ] || printf 'pass\t%s\n' "$name" >>"$CASE_RESULTS"
    else
        rc=1
        fail=$((fail + 1))
        echo "FAIL $name: $why"
        if [ -n "${CASE_RESULTS:-}" ]; then
            why=${why//$'\t'/ }
            printf 'fail\t%s\t%s\n' "$name" "${why//$'\n'/ | }" >>"$CASE_RESULTS"
        fi
    fi
    return $rc
}

capture_output() {
    local name=$1 rc=$2
    shift 2
    [ "$1" = "$MPT" ] && [ -s "$tmp/out" ] || return 0
    outputs_kept=$((${outputs_kept:-0} + 1))
    cp "$tmp/out" "$OUTPUT_CAPTURE/$outputs_kept.out"
    printf '%s\0' "$name" "$rc" "${@:2}" >"$OUTPUT_CAPTURE/$outputs_kept.args"
}

expect() {
    local name=$1 code=$2 out_re=$3 err_re=$4
    shift 5
    if [ -n "${CASE_LIST:-}" ]; then
        case_result "$name" 0
        return 0
    fi
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local rc=$?
    local ok=1 why=""
    [ "$rc" -eq "$code" ] || { ok=0; why="exit $rc, want $code"; }
    [ "$rc" -lt 128 ] || { ok=0; why="$why; killed by signal $((rc - 128))"; }
    match() {
        case $1 in
            '^$') [ ! -s "$2" ] ;;
            '.*') true ;;
            *) grep -Eq -- "$1" "$2" ;;
        esac
    }
    match "$out_re" "$tmp/out" || { ok=0; why="$why; stdout does not match $out_re"; }
    match "$err_re" "$tmp/err" || { ok=0; why="$why; stderr does not match $err_re"; }
    if [ "$code" -ge 2 ]; then
        [ "$(wc -l <"$tmp/err")" -eq 1 ] || { ok=0; why="$why; stderr is not one line"; }
        local prefix=${EXPECT_ERROR_PREFIX:-mpt: error: }
        grep -q "^$prefix" "$tmp/err" || { ok=0; why="$why; stderr is not '$prefix...'"; }
        # Each place once: a file named by both the error and its detail shows up twice.
        ! grep -Eq ': ([^ :]+): \1(: |$)' "$tmp/err" || { ok=0; why="$why; stderr names a place twice"; }
    fi
    [ -z "${OUTPUT_CAPTURE:-}" ] || capture_output "$name" "$rc" "$@"
    if [ $ok -eq 1 ]; then
        case_result "$name" 0
    else
        case_result "$name" 1 "${why#; }
  stdout: $(head -c 300 "$tmp/out")
  stderr: $(head -c 300 "$tmp/err")"
    fi
}
