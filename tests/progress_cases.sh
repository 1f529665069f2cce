# Cases of the progress line (cmd/progress.hpp), for cli_test.sh: drawn on stderr when it is a
# terminal, erased before the answer and before an error, never with -q, never on a stderr
# that is not a terminal, and not for a command whose answer goes to the terminal as it is
# made. script(1) (util-linux) gives the command a terminal; what the terminal shows comes
# back through cat -v (\r as ^M, ESC as ^[). MPT_PROGRESS_AFTER_MS=0 draws the line at once
# rather than after a second, so that the cases hold however fast the machine runs them; the
# count of rows read, which the first draw of a check or dump has not yet, is drawn after a
# tenth of a second of a large file's.
command -v script >/dev/null
case_result "progress: script installed" $? "script not found (util-linux)"

"$GEN" 20000 "$tmp/small.json"
"$MPT" build "$tmp/small.json" -o "$tmp/small.db" >/dev/null
"$GEN" 300000 "$tmp/big.json"
"$MPT" build "$tmp/big.json" -o "$tmp/big.db" >/dev/null
cp "$tmp/small.db" "$tmp/small_damaged.db"
sqlite3 "$tmp/small_damaged.db" "UPDATE nodes SET rlp = X'c0' WHERE path = (SELECT max(path) FROM nodes)"

# on_terminal CMD: runs the mpt command line CMD with a terminal for stdout and stderr, the
# line drawn at once (or after a tenth of a second: after_a_tenth_on_terminal).
on_terminal() {
    MPT_PROGRESS_AFTER_MS=0 script -qec "$1" /dev/null | cat -v
}
after_a_tenth_on_terminal() {
    MPT_PROGRESS_AFTER_MS=100 script -qec "$1" /dev/null | cat -v
}
export -f on_terminal after_a_tenth_on_terminal
export MPT tmp

# The line, redrawn (^M), then erased (^M^[[K) before the answer.
expect "progress: check draws and erases the line" 0 '^\^Mmpt: check: .*big\.db, [0-9]+ rows read, 0 s\^\[\[K.*\^M\^\[\[Kok: 404324 rows' '^$' -- bash -c 'after_a_tenth_on_terminal "$MPT check $tmp/big.db"'
# Nothing before the wait: a command done within it draws no line.
expect "progress: none before its wait" 0 '^ok: 26844 rows' '^$' -- bash -c 'MPT_PROGRESS_AFTER_MS=60000 script -qec "$MPT check $tmp/small.db" /dev/null | cat -v | grep -v "mpt: check"'
expect "progress: not with -q" 0 '^ok: 26844 rows' '^$' -- bash -c 'on_terminal "$MPT -q check $tmp/small.db" | grep -v "mpt: check"'
expect "progress: not on a stderr that is no terminal" 0 '^ok: 26844 rows' '^$' -- bash -c 'on_terminal "$MPT check $tmp/small.db 2>$tmp/check.err"; test ! -s $tmp/check.err'
expect "progress: stats" 0 '^\^Mmpt: stats: .*small\.db, 0 s\^\[\[K.*\^M\^\[\[K$' '^$' -- bash -c 'on_terminal "$MPT stats $tmp/small.db >/dev/null"'
expect "progress: root names the file" 0 '^\^Mmpt: root: .*small\.json, 0 s\^\[\[K.*\^M\^\[\[K$' '^$' -- bash -c 'on_terminal "$MPT root $tmp/small.json >/dev/null"'
# dump prints its answer as it goes: the line only while stdout is not the terminal.
expect "progress: dump, stdout redirected" 0 '^\^Mmpt: dump: .*big\.db, [0-9]+ rows read' '^$' -- bash -c 'after_a_tenth_on_terminal "$MPT dump $tmp/big.db >/dev/null"'
expect "progress: dump to the terminal draws none" 1 '^$' '^$' -- bash -c 'on_terminal "$MPT dump $tmp/small.db" | grep "mpt: dump"'
# Any other write to stderr erases the line first: the error is one clean line.
expect "progress: an error erases the line" 0 '\^M\^\[\[Kmpt: error: node hash mismatch: .*small_damaged\.db: B: trie main, path' '^$' -- bash -c 'on_terminal "$MPT diff --verify $tmp/small.db $tmp/small_damaged.db >/dev/null"'
