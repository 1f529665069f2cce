#!/usr/bin/env bash
# Checks the manual pages in man/ against the built binary:
#  1. groff -man -ww -z over every page: any warning fails.
#  2. Every row of the command table (`mpt --commands`, which `mpt --help` lists too) has
#     the page it names (and every page man/mpt-<cmd>.1 a row) that man/mpt.1 lists, and
#     every flag in `mpt <cmd> --help` appears on the command's page.
#  3. The examples run: in the EXAMPLES section, an .EX block line starting with "$ " is a
#     command; the lines after it, up to the next "$ " line or .EE, are its expected standard
#     output. A line ending in "..." matches any line that starts with the text before it; a
#     line that is only "..." ends the comparison. The command must exit 0, or N when its
#     line ends with "# exit N". Each page's commands run in order, in one scratch folder
#     holding a copy of fixtures/, with mpt first on PATH, under bash -o pipefail.
#
#   scripts/check-man.sh MPT        (MPT: the built mpt binary)
#
# Exits 0 when all is well, 1 when a check fails, 2 on bad usage or when groff is missing.
set -u

if [ $# -ne 1 ]; then
    echo "usage: check-man.sh MPT" >&2
    exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mpt=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if [ ! -x "$mpt" ]; then
    echo "check-man: $1 is not an executable" >&2
    exit 2
fi
if ! command -v groff >/dev/null 2>&1; then
    echo "check-man: groff not found; install the groff-base package (scripts/setup.sh does)" >&2
    exit 2
fi

shopt -s nullglob
pages=("$root"/man/*.1 "$root"/man/*.5)
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL $*"
}

# 1. groff warnings. -ww turns on every warning; -z discards the output.
for page in "${pages[@]}"; do
    warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z "$page" 2>&1)
    if [ -n "$warnings" ]; then
        bad "groff: $(basename "$page")"
        printf '%s\n' "$warnings" | sed 's/^/  /'
    else
        ok
    fi
    # An unescaped "-" renders as a hyphen (U+2010 on a UTF-8 terminal), which does not paste
    # as an option dash: every "--" outside comments must be written "\-\-".
    dashes=$(grep -nE '(^|[^\\])--' "$page" | grep -vE '^[0-9]+:\.\\"')
    if [ -n "$dashes" ]; then
        bad "$(basename "$page"): write option dashes as \\-\\-"
        printf '%s\n' "$dashes" | sed 's/^/  /'
    else
        ok
    fi
done

# 2. Pages against the command table (`mpt --commands`: name, page, summary) and --help.
table=$("$mpt" --commands)
commands=$(printf '%s\n' "$table" | cut -f1)
if [ -z "$commands" ]; then
    bad "no commands from mpt --commands"
fi
help_commands=$("$mpt" --help | awk '/^Subcommands:/ { s = 1; next } s && /^  [a-z]/ { print $1 }')
if [ "$(printf '%s\n' $commands | sort)" = "$(printf '%s\n' $help_commands | sort)" ]; then
    ok
else
    bad "mpt --commands and mpt --help list other commands"
fi
for page in mpt.1 mpt-file.5; do
    if [ -f "$root/man/$page" ]; then ok; else bad "man/$page is missing"; fi
done
for cmd in $commands; do
    name=$(printf '%s\n' "$table" | awk -F'\t' -v c="$cmd" '$1 == c { print $2 }')
    # The overview page lists every command's page in SEE ALSO.
    if grep -qxF ".BR ${name%.1} (1)," <(sed 's/\\-/-/g' "$root/man/mpt.1"); then
        ok
    else
        bad "man/mpt.1 does not list ${name%.1}(1) in SEE ALSO"
    fi
    page=$root/man/$name
    if [ ! -f "$page" ]; then
        bad "no page man/$name for command $cmd (the command table names it)"
        continue
    fi
    ok
    # Every flag of the Options section, as the page writes it (\- for each dash).
    flags=$("$mpt" "$cmd" --help | awk '/^Options:/ { s = 1; next } /^[^ ]/ { s = 0 }
        s && /^  -/ { n = split($1, f, ","); for (i = 1; i <= n; ++i) print f[i] }')
    for flag in $flags; do
        escaped=${flag//-/\\-}
        if grep -qF -- "$escaped" "$page"; then
            ok
        else
            bad "man/mpt-$cmd.1 does not mention $flag (write it as $escaped)"
        fi
    done
done
for page in "$root"/man/mpt-*.1; do
    cmd=$(basename "$page" .1)
    cmd=${cmd#mpt-}
    if printf '%s\n' "$table" | cut -f2 | grep -qxF -- "mpt-$cmd.1"; then ok; else bad "man/mpt-$cmd.1: no command of mpt --commands has this page"; fi
done

# 3. Examples.
# Prints "C<TAB>command" and "O<TAB>line" records for the example blocks of a page, with the
# roff escapes an example may use turned back into text. A line with an escape it does not
# know is reported as "E<TAB>line", one with a bare "-" as "H<TAB>line".
extract() {
    awk '
        /^\.SH/ { ex = ($0 ~ /EXAMPLES/) }
        ex && /^\.EX/ { in_block = 1; next }
        ex && /^\.EE/ { in_block = 0; next }
        in_block {
            # In an example every "-" is typed: it must be "\-".
            if ($0 ~ /(^|[^\\])-/) { print "H\t" $0; next }
            probe = $0
            gsub(/\\(-|\(aq|\(dq|\(ti|\(ha|&|e)/, "", probe)
            if (probe ~ /\\/) { print "E\t" $0; next }
            line = $0
            gsub(/\\-/, "-", line); gsub(/\\\(aq/, "\047", line); gsub(/\\\(dq/, "\"", line)
            gsub(/\\\(ti/, "~", line); gsub(/\\\(ha/, "^", line); gsub(/\\&/, "", line)
            gsub(/\\e/, "\\", line)
            if (substr(line, 1, 2) == "$ ") print "C\t" substr(line, 3); else print "O\t" line
        }' "$1"
}

# check_output EXPECTED_FILE ACTUAL_FILE: 0 when ACTUAL matches the expected lines.
check_output() {
    local -a want got
    mapfile -t want <"$1"
    mapfile -t got <"$2"
    local i
    for ((i = 0; i < ${#want[@]}; ++i)); do
        local w=${want[$i]}
        [ "$w" = "..." ] && return 0
        [ "$i" -lt "${#got[@]}" ] || return 1
        if [ "${w%...}" != "$w" ]; then
            [ "${got[$i]#"${w%...}"}" != "${got[$i]}" ] || return 1
        else
            [ "${got[$i]}" = "$w" ] || return 1
        fi
    done
    [ "${#got[@]}" -eq "${#want[@]}" ]
}

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
ln -s "$mpt" "$bin/mpt"

run_example() {  # page dir command expected_file
    local page=$1 dir=$2 command=$3 want=$4
    local code=0
    if [[ $command =~ \#\ exit\ ([0-9]+)[[:space:]]*$ ]]; then code=${BASH_REMATCH[1]}; fi
    (cd "$dir" && PATH="$bin:$PATH" bash -o pipefail -c "$command") \
        >"$dir/.out" 2>"$dir/.err" </dev/null
    local rc=$?
    if [ "$rc" -ne "$code" ]; then
        bad "$(basename "$page"): \`$command\` exited $rc (want $code)"
        sed 's/^/  stderr: /' "$dir/.err" | head -5
    elif ! check_output "$want" "$dir/.out"; then
        bad "$(basename "$page"): \`$command\` printed other output"
        echo "  want:"
        sed 's/^/    /' "$want"
        echo "  got:"
        sed 's/^/    /' "$dir/.out" | head -20
    else
        ok
    fi
}

examples=0
for page in "${pages[@]}"; do
    dir=$(mktemp -d)
    cp -r "$root/fixtures" "$dir/fixtures"
    command=
    skip=0  # after a command line that could not be read: ignore its output lines
    : >"$dir/.want"
    while IFS=$'\t' read -r kind text; do
        case $kind in
            E | H)
                if [ "$kind" = E ]; then
                    bad "$(basename "$page"): example line with an unknown roff escape: $text"
                else
                    bad "$(basename "$page"): example line with a bare - (write \\-): $text"
                fi
                if [ "${text:0:2}" = '$ ' ]; then
                    [ -n "$command" ] && run_example "$page" "$dir" "$command" "$dir/.want"
                    command=
                    skip=1
                fi
                ;;
            C)
                [ -n "$command" ] && run_example "$page" "$dir" "$command" "$dir/.want"
                command=$text
                skip=0
                examples=$((examples + 1))
                : >"$dir/.want"
                ;;
            O)
                if [ "$skip" -eq 1 ]; then
                    :
                elif [ -z "$command" ]; then
                    bad "$(basename "$page"): example output before any command: $text"
                else
                    printf '%s\n' "$text" >>"$dir/.want"
                fi
                ;;
        esac
    done < <(extract "$page")
    [ -n "$command" ] && run_example "$page" "$dir" "$command" "$dir/.want"
    rm -rf "$dir"
done
if [ "$examples" -eq 0 ]; then bad "no examples found"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
