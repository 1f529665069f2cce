// mpt completion bash|zsh|fish: a completion script made from the command table and each
// command's options as it registers them, so that it names every command and flag there is.
#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"

namespace mpt::cli {
namespace {

struct CompletionOptions {
    std::string shell;
};

// One option of a command, as completion needs it.
struct Flag {
    std::vector<std::string> names;  // "--trie", "-o"
    std::string help;
    bool takes_value = false;
    bool is_file = false;  // its value is a file
};

struct CommandInfo {
    std::string name;
    std::string summary;
    std::vector<Flag> flags;
    std::vector<std::string> first_words;  // the first operand's fixed choices (rlp's action)
    bool first_may_be_file = false;        // or a file instead (witness's make form)
};

// The value of these options is a file (the rest take values that cannot be guessed).
bool file_option(std::string_view command, std::string_view option) {
    return option == "--output" || option == "--keys" || option == "--tmp" ||
           option == "--changes" || (command == "proof" && option == "--verify") ||
           (command == "witness" && option == "--header");
}

// Every command with its options, registered here as main() registers them.
std::vector<CommandInfo> commands_info() {
    CLI::App app;
    Runner runner;
    std::vector<CommandInfo> out;
    for (const Command& c : command_table()) {
        CLI::App* sub = app.add_subcommand(c.name, c.summary);
        c.add(sub, runner);
        CommandInfo info{c.name, c.summary, {}, {}};
        for (const CLI::Option* opt : sub->get_options()) {
            if (opt->get_positional()) continue;
            Flag f;
            for (const std::string& s : opt->get_snames()) f.names.push_back("-" + s);
            for (const std::string& l : opt->get_lnames()) f.names.push_back("--" + l);
            if (f.names.empty()) continue;
            f.help = opt->get_description();
            f.takes_value = opt->get_type_size_max() != 0 && opt->get_expected_min() != 0;
            f.is_file = f.takes_value && file_option(c.name, "--" + opt->get_lnames().front());
            info.flags.push_back(std::move(f));
        }
        if (info.name == "rlp") info.first_words = {"decode", "encode"};
        if (info.name == "completion") info.first_words = {"bash", "zsh", "fish"};
        if (info.name == "witness") {
            info.first_words = {"check", "apply", "diff"};
            info.first_may_be_file = true;
        }
        out.push_back(std::move(info));
    }
    return out;
}

// text with each of chars escaped by a backslash.
std::string escaped(std::string_view text, std::string_view chars) {
    std::string out;
    for (const char c : text) {
        if (chars.find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

// text for inside a shell's single quotes ('\\'' for a quote), with each of chars escaped by a
// backslash for zsh's own parsing.
std::string zsh_quoted(std::string_view text, std::string_view chars) {
    std::string out;
    for (const char c : text) {
        if (c == '\'') {
            out += "'\\''";
            continue;
        }
        if (chars.find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
    return out;
}

// words joined by sep.
std::string joined(const std::vector<std::string>& words, std::string_view sep) {
    std::string out;
    for (const std::string& w : words) {
        if (!out.empty()) out += sep;
        out += w;
    }
    return out;
}

// The first line of a help text (the rest is detail a menu has no room for).
std::string first_line(const std::string& help) { return help.substr(0, help.find('\n')); }

std::string zsh_script(const std::vector<CommandInfo>& commands) {
    std::string out =
        "#compdef mpt\n"
        "# zsh completion for mpt, made by `mpt completion zsh` from its commands and their\n"
        "# options. Install as _mpt in a folder of $fpath.\n\n"
        "_mpt() {\n"
        "    local -a commands\n"
        "    commands=(\n";
    for (const CommandInfo& c : commands) {
        out += "        '" + zsh_quoted(c.name, ":") + ":" + zsh_quoted(c.summary, "") + "'\n";
    }
    out +=
        "    )\n"
        "    # The command: the first word after mpt that is no flag.\n"
        "    local i cmd=\n"
        "    for ((i = 2; i < CURRENT; ++i)); do\n"
        "        [[ $words[i] != -* ]] && { cmd=$words[i]; break }\n"
        "    done\n"
        "    if [[ -z $cmd ]]; then\n"
        "        _arguments '(-q --quiet)'{-q,--quiet}'[no progress and no notes on stderr]' \\\n"
        "            '--version[print the version]' '--commands[list the commands]' \\\n"
        "            '(-h --help)'{-h,--help}'[print help]' ':command:->command'\n"
        "        [[ $state == command ]] && _describe 'command' commands\n"
        "        return\n"
        "    fi\n"
        "    # From the command on.\n"
        "    shift $((i - 1)) words\n"
        "    (( CURRENT -= i - 1 ))\n"
        "    case $cmd in\n";
    for (const CommandInfo& c : commands) {
        out += "        " + c.name + ")\n            _arguments -s";
        for (const Flag& f : c.flags) {
            const std::string help = zsh_quoted(first_line(f.help), "[]:\\");
            std::string action = f.takes_value ? (f.is_file ? ":file:_files" : ":value:") : "";
            for (const std::string& n : f.names) {
                out += " \\\n                '" + n + "[" + help + "]" + action + "'";
            }
        }
        if (!c.first_words.empty()) {
            const std::string words = joined(c.first_words, " ");
            out += " \\\n                ':action:(" + words + ")' '*:file:_files'";
        } else {
            out += " \\\n                '*:file:_files'";
        }
        out += "\n            ;;\n";
    }
    out +=
        "    esac\n"
        "}\n\n"
        "_mpt \"$@\"\n";
    return out;
}

std::string fish_script(const std::vector<CommandInfo>& commands) {
    std::string names;
    for (const CommandInfo& c : commands) names += (names.empty() ? "" : " ") + c.name;
    std::string out =
        "# fish completion for mpt, made by `mpt completion fish` from its commands and their\n"
        "# options. Install as mpt.fish in ~/.config/fish/completions.\n\n"
        "set -l mpt_commands " +
        names +
        "\n"
        "complete -c mpt -n \"not __fish_seen_subcommand_from $mpt_commands\" -s q -l quiet "
        "-d 'No progress and no notes on stderr'\n"
        "complete -c mpt -n \"not __fish_seen_subcommand_from $mpt_commands\" -l version "
        "-d 'Print the version'\n"
        "complete -c mpt -n \"not __fish_seen_subcommand_from $mpt_commands\" -l commands "
        "-d 'List the commands'\n";
    for (const CommandInfo& c : commands) {
        out += "complete -c mpt -f -n \"not __fish_seen_subcommand_from $mpt_commands\" -a " +
               c.name + " -d '" + escaped(c.summary, "'\\") + "'\n";
    }
    for (const CommandInfo& c : commands) {
        const std::string cond = "-n \"__fish_seen_subcommand_from " + c.name + "\"";
        for (const Flag& f : c.flags) {
            out += "complete -c mpt " + cond;
            for (const std::string& n : f.names) {
                out += n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1);
            }
            if (f.takes_value) out += f.is_file ? " -r -F" : " -r -f";
            out += " -d '" + escaped(first_line(f.help), "'\\") + "'\n";
        }
        if (!c.first_words.empty()) {
            const std::string words = joined(c.first_words, " ");
            out += "complete -c mpt -f -n \"__fish_seen_subcommand_from " + c.name +
                   "; and not __fish_seen_subcommand_from " + words + "\" -a '" + words + "'\n";
        }
    }
    return out;
}

// What follows a flag in bash's completion: a file, the name of a trie in the trie file on the
// line, anything else, or nothing for a flag that takes no value ("").
std::string_view bash_kind(const Flag& f) {
    if (!f.takes_value) return "";
    if (f.is_file) return "file";
    for (const std::string& n : f.names) {
        if (n == "--trie" || n == "--trie-b") return "trie";
    }
    return "value";
}

// The parts of bash's script that no command's options change.
constexpr std::string_view kBashHead =
    R"sh(# bash completion for mpt, made by `mpt completion bash` from its commands and their options:
# subcommands, each subcommand's flags, the fixed first words of some, after --trie the names
# of the tries in the trie file given earlier on the line (mpt tries --names; "main" when
# there is none), files for file arguments. Install as mpt in a folder of bash-completion's
# (/usr/share/bash-completion/completions), or source it.

# The command names, one a line.
_mpt_command_names() {
    "${COMP_WORDS[0]}" --commands 2>/dev/null | cut -f1
}

)sh";

constexpr std::string_view kBashTail = R"sh(
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
    local IFS=$'
'
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
                local IFS=$'
'
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
    # The first operand of some commands is a word from a list (or a file).
    if ((COMP_CWORD == i + 1)); then
        local words fixed may_file=
        words=$(_mpt_first_words "$cmd")
        if [[ $words == *" file" ]]; then
            may_file=1
            words=${words% file}
        fi
        if [[ -n $words ]]; then
            fixed=($(compgen -W "$words" -- "$cur"))
            [[ -n $may_file ]] && _mpt_files "$cur"
            COMPREPLY+=("${fixed[@]}")
            return 0
        fi
    fi
    # Positional arguments are files (key/value files, trie files, documents), or keys and
    # path sets, which cannot be guessed.
    _mpt_files "$cur"
    return 0
}

complete -F _mpt mpt
)sh";

std::string bash_script(const std::vector<CommandInfo>& commands) {
    std::string out(kBashHead);
    out +=
        "# The flags of one subcommand (no subcommand: mpt's own).\n"
        "_mpt_flags() {\n"
        "    case $1 in\n"
        "        \"\") echo \"-h --help --version -q --quiet --commands\" ;;\n";
    for (const CommandInfo& c : commands) {
        std::vector<std::string> names;
        for (const Flag& f : c.flags) names.insert(names.end(), f.names.begin(), f.names.end());
        out += "        " + c.name + ") echo \"" + joined(names, " ") + "\" ;;\n";
    }
    out +=
        "    esac\n"
        "}\n\n"
        "# What follows a flag of a subcommand: \"file\", \"trie\" (a trie name), \"value\" "
        "(anything\n"
        "# else), or nothing for a flag that takes no value.\n"
        "_mpt_option_kind() {\n"
        "    case $1:$2 in\n";
    for (const CommandInfo& c : commands) {
        for (const Flag& f : c.flags) {
            const std::string_view kind = bash_kind(f);
            if (kind.empty()) continue;
            std::vector<std::string> patterns;
            for (const std::string& n : f.names) patterns.push_back(c.name + ":" + n);
            out += "        " + joined(patterns, " | ") + ") echo " + std::string(kind) + " ;;\n";
        }
    }
    out +=
        "    esac\n"
        "}\n\n"
        "# The fixed first words of a subcommand's operands, and \"file\" last where a file may "
        "stand\n"
        "# there instead.\n"
        "_mpt_first_words() {\n"
        "    case $1 in\n";
    for (const CommandInfo& c : commands) {
        if (c.first_words.empty()) continue;
        out += "        " + c.name + ") echo \"" + joined(c.first_words, " ") +
               (c.first_may_be_file ? " file" : "") + "\" ;;\n";
    }
    out +=
        "    esac\n"
        "}\n";
    out += kBashTail;
    return out;
}

int run_completion(const CompletionOptions& o) {
    const std::vector<CommandInfo> commands = commands_info();
    const std::string script = o.shell == "bash"  ? bash_script(commands)
                               : o.shell == "zsh" ? zsh_script(commands)
                                                  : fish_script(commands);
    std::fwrite(script.data(), 1, script.size(), stdout);
    return kOk;
}

}  // namespace

void register_completion(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<CompletionOptions>();
    sub->add_option("shell", o->shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh", "fish"}));
    sub->footer(
        "Prints a completion script for the shell, made from mpt's commands and their options:\n"
        "  mpt completion bash > ~/.local/share/bash-completion/completions/mpt\n"
        "  mpt completion zsh > \"${fpath[1]}/_mpt\"\n"
        "  mpt completion fish > ~/.config/fish/completions/mpt.fish\n"
        "cmake --install puts all three in place.");
    sub->final_callback([o, &runner] { runner = [o] { return run_completion(*o); }; });
}

}  // namespace mpt::cli
