# The README's tour, for cli_test.sh: every line of its block runs as written (build/mpt and
# fixtures/ standing for this build's binary and the fixtures), each exit 0 but diff's 1 (the
# tries differ), and a line whose comment is an answer (0x..., valid...) prints it.
readme=$(dirname "${BASH_SOURCE[0]}")/../README.md
tour=$(awk '/^## A tour/ { on = 1; next } on && /^```sh/ { inside = 1; next } inside && /^```/ { exit } inside' "$readme")
[ -n "$tour" ]
case_result "readme: a tour block" $? "no tour block under '## A tour' in $readme"
mkdir -p "$tmp/tour"
tour_lines=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    tour_lines=$((tour_lines + 1))
    cmd=${line%%#*}
    answer=$(printf '%s' "$line" | sed -n 's/.*# \(0x[0-9a-f]*\|valid.*\)$/\1/p')
    want=0
    case $cmd in *"mpt diff "*) want=1 ;; esac
    out=$(cd "$tmp/tour" && MPT="$MPT" FIX="$FIX" bash -c "${cmd//build\/mpt/\"\$MPT\"}" 2>&1)
    rc=$?
    out_re='.*'
    [ -z "$answer" ] || out_re="^$answer\$"
    [ $rc -eq $want ] && { [ -z "$answer" ] || printf '%s\n' "$out" | grep -Eq "$out_re"; }
    # Named by the command as the README writes it (a ctest name holds no ';').
    name=${cmd//$FIX\//fixtures/}
    name=${name%"${name##*[! ]}"}
    case_result "readme tour: ${name//;/,}" $? \
        "exit $rc (want $want): $(printf '%s' "$out" | head -c 300)"
done <<<"${tour//fixtures\//$FIX/}"
[ $tour_lines -ge 10 ]
case_result "readme tour: at least 10 lines" $? "$tour_lines lines"

# The two commands first: the main job's answer is what its comment says, and the test command
# is the one CI runs.
first=$(awk '/^```sh/ { inside = 1; next } inside && /^```/ { exit } inside' "$readme")
job=$(printf '%s\n' "$first" | sed -n 's/^scripts\/setup.sh && //p' | head -1)
answer=$(printf '%s\n' "$first" | sed -n 's/^# \(0x[0-9a-f]*\)$/\1/p' | head -1)
[ -n "$job" ] && [ -n "$answer" ] &&
    [ "$(cd "$FIX/.." && MPT="$MPT" bash -c "${job//build\/mpt/\"\$MPT\"}" 2>&1)" = "$answer" ]
case_result "readme: the main job on a shipped example prints its answer" $? \
    "'$job' does not print '$answer'"
printf '%s\n' "$first" | grep -qx 'scripts/test.sh' &&
    grep -q '^step test .*scripts/test.sh$' "$(dirname "$readme")/.ci/run"
case_result "readme: the test command is the one CI runs" $? \
    "no line 'scripts/test.sh' in the README's first block, or .ci/run does not run it"

# The command table names every command of the binary's table, and no other.
table=$(awk '/^## Commands/ { on = 1; next } on && /^## / { exit } on && /^\| `/' "$readme" |
    grep -o '^| `[^|]*' | grep -o '`[a-z-]*`' | tr -d '`' | sort)
[ -n "$table" ] && [ "$table" = "$("$MPT" --commands | cut -f1 | sort)" ]
case_result "readme: the command table is mpt --commands" $? \
    "the README lists $(echo $table), mpt --commands $("$MPT" --commands | cut -f1 | sort | tr '\n' ' ')"
