# The README's tour, for cli_test.sh: every line of its block runs as written (build/mpt and
# fixtures/ standing for this build's binary and the fixtures), each exit 0 but diff's 1 (the
# tries differ), and a line whose comment is an answer (0x..., valid...) prints it.
readme=$(dirname "${BASH_SOURCE[0]}")/../README.md
tour=$(awk '/^## A tour/ { on = 1; next } on && /^```sh/ { inside = 1; next } inside && /^```/ { exit } inside' "$readme")
if [ -z "$tour" ]; then
    fail=$((fail + 1))
    echo "FAIL readme: no tour block under '## A tour' in $readme"
fi
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
    if [ $rc -eq $want ] && { [ -z "$answer" ] || printf '%s\n' "$out" | grep -Eq "$out_re"; }; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL readme tour: $line: exit $rc (want $want): $(printf '%s' "$out" | head -c 300)"
    fi
done <<<"${tour//fixtures\//$FIX/}"
[ $tour_lines -ge 10 ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL readme tour: $tour_lines lines"; }
