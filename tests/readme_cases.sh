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
