# Cases of the progress line (cmd/progress.hpp), for cli_test.sh: drawn on stderr when it is a
# terminal, erased before the answer and before an error, never with -q, never on a stderr
# that is not a terminal, and not for a command whose answer goes to the terminal as it is
# made. script(1) (util-linux) gives the command a terminal; what the terminal shows comes
# back through cat -v (\r as ^M, ESC as ^[). MPT_PROGRESS_AFTER_MS=100 draws the line after a
# tenth of a second rather than a second.
command -v script >/dev/null
case_result "progress: script installed" $? "script not found (util-linux)"

"$GEN" 300000 "$tmp/big.json"
"$MPT" build "$tmp/big.json" -o "$tmp/big.db" >/dev/null
cp "$tmp/big.db" "$tmp/big_damaged.db"
sqlite3 "$tmp/big_damaged.db" "UPDATE nodes SET rlp = X'c0' WHERE path = (SELECT max(path) FROM nodes)"

# on_terminal CMD: runs the mpt command line CMD with a terminal for stdout and stderr. Drawn
# after a tenth of a second (check, dump and diff here take more), or at once (at_once_...).
on_terminal() {
    MPT_PROGRESS_AFTER_MS=100 script -qec "$1" /dev/null | cat -v
}
at_once_on_terminal() {
    MPT_PROGRESS_AFTER_MS=0 script -qec "$1" /dev/null | cat -v
}
export -f on_terminal at_once_on_terminal
export MPT tmp

# The line, redrawn (^M), then erased (^M^[[K) before the answer.
expect "progress: check draws and erases the line" 0 '^\^Mmpt: check: .*big\.db, [0-9]+ rows read, 0 s\^\[\[K.*\^M\^\[\[Kok: 404324 rows' '^$' -- bash -c 'on_terminal "$MPT check $tmp/big.db"'
expect "progress: not with -q" 0 '^ok: 404324 rows' '^$' -- bash -c 'on_terminal "$MPT -q check $tmp/big.db" | grep -v "mpt: check"'
expect "progress: not on a stderr that is no terminal" 0 '^ok: 404324 rows' '^$' -- bash -c 'on_terminal "$MPT check $tmp/big.db 2>$tmp/check.err"; test ! -s $tmp/check.err'
expect "progress: stats" 0 '^\^Mmpt: stats: .*big\.db, 0 s\^\[\[K.*\^M\^\[\[K$' '^$' -- bash -c 'at_once_on_terminal "$MPT stats $tmp/big.db >/dev/null"'
expect "progress: root names the file" 0 '^\^Mmpt: root: .*big\.json, 0 s\^\[\[K.*\^M\^\[\[K$' '^$' -- bash -c 'at_once_on_terminal "$MPT root $tmp/big.json >/dev/null"'
# dump prints its answer as it goes: the line only while stdout is not the terminal.
expect "progress: dump, stdout redirected" 0 '^\^Mmpt: dump: .*big\.db, [0-9]+ rows read' '^$' -- bash -c 'on_terminal "$MPT dump $tmp/big.db >/dev/null"'
expect "progress: dump to the terminal draws none" 1 '^$' '^$' -- bash -c 'on_terminal "$MPT dump $tmp/big.db" | grep "mpt: dump"'
# Any other write to stderr erases the line first: the error is one clean line.
expect "progress: an error erases the line" 0 '\^M\^\[\[Kmpt: error: node hash mismatch: .*big_damaged\.db: B: trie main, path' '^$' -- bash -c 'on_terminal "$MPT diff --verify $tmp/big.db $tmp/big_damaged.db >/dev/null"'
