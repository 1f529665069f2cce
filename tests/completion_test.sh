#!/usr/bin/env bash
# Checks the completion scripts `mpt completion bash|zsh|fish` makes: bash's by a few
# completions, and its lists against the binary's --help exactly (every subcommand, every
# flag of each, and which flags take a value); zsh's and fish's parse and name every flag.
#   completion_test.sh MPT
set -u
if [ $# -ne 1 ]; then
    echo "usage: completion_test.sh MPT" >&2
    exit 2
fi
MPT=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
# complete is a bash builtin; it works in a non-interactive shell too.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$MPT" completion bash >"$tmp/mpt.bash" || {
    echo "FAIL mpt completion bash"
    exit 1
}
. "$tmp/mpt.bash"

pass=0
fail=0
check() {  # name expected actual
    if [ "$2" = "$3" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $1"
        echo "  want: $2"
        echo "  got:  $3"
    fi
}

# complete_line WORDS...: COMPREPLY for the command line WORDS, the last being the word
# under the cursor; prints the candidates sorted, space-separated.
complete_line() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _mpt
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# The mpt the lines run is this build's, on PATH: the command names and the tries of a file
# come from it.
mkdir "$tmp/bin"
ln -s "$MPT" "$tmp/bin/mpt"
PATH=$tmp/bin:$PATH

# Completion is registered for mpt.
check "complete -p mpt" "complete -F _mpt mpt" "$(complete -p mpt)"

# Subcommands and flags.
check "mpt bu" "build" "$(complete_line mpt bu)"
check "mpt get" "get get-node" "$(complete_line mpt get)"
check "mpt v" "vacuum verify-range" "$(complete_line mpt v)"
check "mpt he" "help" "$(complete_line mpt he)"
check "mpt help ro" "root" "$(complete_line mpt help ro)"
check "mpt -q help ro" "root" "$(complete_line mpt -q help ro)"
check "mpt help root ''" "" "$(complete_line mpt help root '')"
check "mpt -q r" "rlp root" "$(complete_line mpt -q r)"
check "mpt --v" "--version" "$(complete_line mpt --v)"
check "mpt proof --ve" "--verify" "$(complete_line mpt proof --ve)"
check "mpt diff --tr" "--trie --trie-b" "$(complete_line mpt diff --tr)"
check "mpt get-node dogs.db --m" "--max-bytes" "$(complete_line mpt get-node dogs.db --m)"
check "mpt build -o x.db --r" "--replace" "$(complete_line mpt build -o x.db --r)"
check "mpt count-allocs --" "--help --json --leaves --samples" \
    "$(complete_line mpt count-allocs --)"

# Values of flags: trie names, files, nothing.
check "mpt get --trie ''" "main" "$(complete_line mpt get --trie '')"
check "mpt diff --trie-b m" "main" "$(complete_line mpt diff --trie-b m)"
check "mpt proof --range ''" "" "$(complete_line mpt proof --range '')"
check "mpt count-allocs --samples ''" "" "$(complete_line mpt count-allocs --samples '')"

# Files for file arguments.
mkdir "$tmp/sub"
touch "$tmp/dogs.json" "$tmp/dogs.db" "$tmp/sub/range.json"
cd "$tmp" || exit 2
check "mpt root d" "dogs.db dogs.json" "$(complete_line mpt root d)"
check "mpt build -o d" "dogs.db dogs.json" "$(complete_line mpt build -o d)"
check "mpt proof --verify sub/" "sub/range.json" "$(complete_line mpt proof --verify sub/)"
check "mpt root --vectors dogs.json d" "dogs.db dogs.json" \
    "$(complete_line mpt root --vectors dogs.json d)"
check "mpt get --trie main d" "dogs.db dogs.json" "$(complete_line mpt get --trie main d)"

# After --trie: the names of the tries in the trie file named earlier on the line (by the mpt
# the line runs); "main" without one.
printf '{"a": "b"}' >"$tmp/one.json"
mpt build "$tmp/one.json" -o names.db >/dev/null
mpt build "$tmp/one.json" -o names.db --trie "0x$(printf 'AB%.0s' $(seq 32))" >/dev/null
mpt build "$tmp/one.json" -o names.db --trie "with space" >/dev/null
check "mpt get names.db --trie ''" "0x$(printf 'ab%.0s' $(seq 32)) main with space" \
    "$(complete_line mpt get names.db --trie '')"
check "mpt get --json names.db --trie w" "with space" "$(complete_line mpt get --json names.db --trie w)"
check "mpt tree --depth 2 names.db --trie m" "main" "$(complete_line mpt tree --depth 2 names.db --trie m)"
check "mpt diff dogs.db names.db --trie-b m" "main" "$(complete_line mpt diff dogs.db names.db --trie-b m)"
check "mpt diff names.db dogs.db --trie w" "with space" "$(complete_line mpt diff names.db dogs.db --trie w)"
check "mpt copy nofile.db --trie ''" "main" "$(complete_line mpt copy nofile.db --trie '')"
cd - >/dev/null || exit 2

# Drift: the lists against --help.
sorted() { tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'; }
help_commands=$("$MPT" --help | awk '/^Subcommands:/ { s = 1; next } s && /^  [a-z]/ { print $1 }')
check "subcommands of mpt --help" "$(echo $help_commands help | sorted)" "$(complete_line mpt '')"
check "mpt --commands against --help" "$(echo $help_commands | sorted)" \
    "$(mpt --commands | cut -f1 | tr '\n' ' ' | sorted)"
[ -n "$help_commands" ] || check "mpt --help lists subcommands" "some" "none"

# Options lines of a --help text: "NAMES [TYPE...]   description". A single space after the
# names means a type follows (the flag takes a value); the description is further right.
help_flags() {
    awk '/^Options:/ { s = 1; next } /^[^ ]/ { s = 0 }
        s && /^  -/ {
            value = ($0 ~ /^  [^ ]+ [^ ]/) ? "value" : "flag"
            n = split($1, f, ",")
            for (i = 1; i <= n; ++i) print f[i], value
        }'
}
check "flags of mpt --help" "$("$MPT" --help | help_flags | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')" \
    "$(_mpt_flags "" | sorted)"
for cmd in $help_commands; do
    lines=$("$MPT" "$cmd" --help | help_flags)
    if [ -z "$lines" ]; then
        check "mpt $cmd --help lists options" "some" "none"
        continue
    fi
    check "flags of mpt $cmd" "$(printf '%s\n' "$lines" | awk '{ print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')" \
        "$(_mpt_flags "$cmd" | sorted)"
    while read -r flag kind; do
        completion_kind=$(_mpt_option_kind "$cmd" "$flag")
        if [ "$kind" = value ]; then
            [ -n "$completion_kind" ] && got=value || got=flag
        else
            [ -z "$completion_kind" ] && got=flag || got=value
        fi
        check "mpt $cmd $flag takes a value?" "$kind" "$got"
    done <<<"$lines"
done

# zsh and fish: the scripts mpt completion makes parse, and name every command and every flag
# of each (they are made from the same registration as --help, so this catches a generator
# that leaves some out).
for sh in zsh fish; do
    if ! command -v $sh >/dev/null; then
        check "$sh installed (scripts/setup.sh installs it)" "yes" "no"
        continue
    fi
    "$MPT" completion $sh >"$tmp/mpt.$sh"
    $sh -n "$tmp/mpt.$sh"
    check "mpt completion $sh parses" 0 $?
    for cmd in $help_commands; do
        [ "$cmd" = help ] && continue
        grep -q -- "$cmd" "$tmp/mpt.$sh"
        check "mpt completion $sh names $cmd" 0 $?
        for flag in $("$MPT" "$cmd" --help | help_flags | awk '{ print $1 }'); do
            case $sh:$flag in
                zsh:*) grep -q -- "'$flag\[" "$tmp/mpt.$sh" ;;
                fish:--*) grep -q -- "from $cmd\".* -l ${flag#--}\( \|\$\)" "$tmp/mpt.$sh" ;;
                fish:-*) grep -q -- "from $cmd\".* -s ${flag#-}\( \|\$\)" "$tmp/mpt.$sh" ;;
            esac
            check "mpt completion $sh: $cmd $flag" 0 $?
        done
    done
done
# fish completes from the script: commands, rlp's action once, a command's flags.
if command -v fish >/dev/null; then
    fish_complete() { fish -c "source $tmp/mpt.fish; complete -C '$1'" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'; }
    check "fish: mpt rl" "rlp" "$(fish_complete 'mpt rl')"
    check "fish: mpt rlp ''" "decode encode" "$(fish_complete 'mpt rlp ')"
    check "fish: mpt slot --el" "--element-slots" "$(fish_complete 'mpt slot --el')"
fi
check "bash: mpt rlp ''" "decode encode" "$(complete_line mpt rlp '')"
check "bash: mpt completion ''" "bash fish zsh" "$(complete_line mpt completion '')"
# witness: its three forms' words, or the state file of the make form.
mkdir "$tmp/w"
touch "$tmp/w/chain.db" "$tmp/w/a.json"
cd "$tmp/w" || exit 2
check "bash: mpt witness c" "chain.db check" "$(complete_line mpt witness c)"
check "bash: mpt witness ''" "a.json apply chain.db check diff" "$(complete_line mpt witness '')"
check "bash: mpt witness check c" "chain.db" "$(complete_line mpt witness check c)"
cd - >/dev/null || exit 2

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
