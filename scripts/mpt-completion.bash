# Bash completion for mpt (zsh's and fish's: mpt completion zsh|fish): subcommands, each
# subcommand's flags, rlp's and completion's first word, after --trie the names of the
# tries in the trie file given earlier on the line (mpt tries --names; "main" when there is
# none), files for file arguments.
#
#   source scripts/mpt-completion.bash
#
# The commands come from the mpt being completed (`mpt --commands`, its table of them); the
# flags below follow `mpt <command> --help`, and tests/completion_test.sh fails when they
# drift apart.

# The command names, one a line.
_mpt_command_names() {
    "${COMP_WORDS[0]}" --commands 2>/dev/null | cut -f1
}

# The flags of one subcommand (no subcommand: mpt's own).
_mpt_flags() {
    case $1 in
        "") echo "-h --help --version -q --quiet --commands" ;;
        root) echo "-h --help --trie --vectors --state --list --block --secure --threads --memory --tmp --max-input --stats --json" ;;
        build) echo "-h --help -o --output --trie --secure --replace --state --no-preimages --ignore-stated-roots --json --threads --memory --tmp --max-input" ;;
        get) echo "-h --help --keys --account --slot --key-hashed --trie --json" ;;
        dump) echo "-h --help --from --limit --key-hashed --accounts --storage --code --trie --json" ;;
        check | stats) echo "-h --help --trie --json" ;;
        count-allocs) echo "-h --help --leaves --samples --json" ;;
        diff) echo "-h --help --trie --trie-b --secure --state --json --stats --nodes --verify" ;;
        get-node) echo "-h --help --trie --max-bytes --json" ;;
        proof) echo "-h --help --trie --keys --account --slot --range --to --limit --max-bytes --key-hashed --verify --root --json" ;;
        verify-range) echo "-h --help --json" ;;
        keccak) echo "-h --help --json --raw" ;;
        rlp) echo "-h --help" ;;
        tries) echo "-h --help --names --json" ;;
        drop) echo "-h --help --trie --json" ;;
        vacuum) echo "-h --help --json" ;;
        copy) echo "-h --help --trie --to --replace --json" ;;
        tree) echo "-h --help --trie --from --depth --limit --dot --json" ;;
        slot) echo "-h --help --key --index --element-slots --json" ;;
        completion) echo "-h --help" ;;
        update) echo "-h --help --changes --expect-root --no-preimages --json" ;;
        witness) echo "-h --help --root --strict --json --keys --changes --header --rlp --canonical -o --output" ;;
    esac
}

# What follows a flag of a subcommand: "file", "trie" (a trie name), "value" (anything
# else), or nothing for a flag that takes no value.
_mpt_option_kind() {
    case $1:$2 in
        build:-o | build:--output | proof:--verify) echo file ;;
        get:--keys | proof:--keys | update:--changes) echo file ;;
        witness:--keys | witness:--changes | witness:--header | witness:-o | witness:--output) echo file ;;
        *:--trie | diff:--trie-b) echo trie ;;
        dump:--from | dump:--limit | count-allocs:--leaves | count-allocs:--samples) echo value ;;
        get-node:--max-bytes | root:--threads | build:--threads) echo value ;;
        root:--memory | build:--memory | root:--max-input | build:--max-input) echo value ;;
        root:--tmp | build:--tmp) echo file ;;
        get:--account | get:--slot | proof:--account | proof:--slot) echo value ;;
        proof:--range | proof:--to | proof:--limit | proof:--max-bytes | proof:--root | update:--expect-root | witness:--root) echo value ;;
        copy:--to | tree:--from | tree:--depth | tree:--limit | slot:--key | slot:--index | slot:--element-slots) echo value ;;
    esac
}

# The names of the tries in the trie file that is positional argument n (from 1) of the
# subcommand cmd, which stands at word first: one a line, or "main" when that argument is
# no trie file (not given yet, missing, or not readable).
_mpt_trie_names() {
    local cmd=$1 first=$2 n=$3 j seen=0 word file=
    for ((j = first + 1; j < COMP_CWORD; ++j)); do
        word=${COMP_WORDS[j]}
        case $word in
            -*) [[ -n $(_mpt_option_kind "$cmd" "$word") ]] && ((++j)) ;;
            *)
                if ((++seen == n)); then
                    file=$word
                    break
                fi
                ;;
        esac
    done
    if [[ -n $file && -f $file ]] && "${COMP_WORDS[0]}" tries --names "$file" 2>/dev/null; then
        return 0
    fi
    echo main
}

_mpt_files() {
    compopt -o filenames 2>/dev/null
    local IFS=$'\n'
    COMPREPLY=($(compgen -f -- "$1"))
}

_mpt() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    # The subcommand: the first word after mpt that is not a flag (mpt's own flags take no
    # value).
    local cmd= i
    for ((i = 1; i < COMP_CWORD; ++i)); do
        case ${COMP_WORDS[i]} in
            -*) ;;
            *)
                cmd=${COMP_WORDS[i]}
                break
                ;;
        esac
    done
    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$(_mpt_flags "")" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(_mpt_command_names) help" -- "$cur"))
        fi
        return 0
    fi
    # mpt help [COMMAND]
    if [[ $cmd == help ]]; then
        ((COMP_CWORD == i + 1)) && COMPREPLY=($(compgen -W "$(_mpt_command_names)" -- "$cur"))
        return 0
    fi

    if ((COMP_CWORD - 1 > i)); then
        case $(_mpt_option_kind "$cmd" "$prev") in
            file)
                _mpt_files "$cur"
                return 0
                ;;
            trie)
                # diff's --trie-b names a trie of its second file.
                local n=1 names
                [[ $prev == --trie-b ]] && n=2
                names=$(_mpt_trie_names "$cmd" "$i" "$n")
                local IFS=$'\n'
                COMPREPLY=($(compgen -W "$names" -- "$cur"))
                return 0
                ;;
            value) return 0 ;;
        esac
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_mpt_flags "$cmd")" -- "$cur"))
        return 0
    fi
    # The first operand of rlp, completion and witness is a word from a list.
    if ((COMP_CWORD == i + 1)); then
        case $cmd in
            rlp)
                COMPREPLY=($(compgen -W "decode encode" -- "$cur"))
                return 0
                ;;
            completion)
                COMPREPLY=($(compgen -W "zsh fish" -- "$cur"))
                return 0
                ;;
            witness)
                # check, apply or diff, or the state file of the make form.
                local words
                words=($(compgen -W "check apply diff" -- "$cur"))
                _mpt_files "$cur"
                COMPREPLY+=("${words[@]}")
                return 0
                ;;
        esac
    fi
    # Positional arguments are files (key/value files, trie files, documents), or keys and
    # path sets, which cannot be guessed.
    _mpt_files "$cur"
    return 0
}

complete -F _mpt mpt
