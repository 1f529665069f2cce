// The command line around CLI11: flags in any order, usage errors in the project's words, one
// help layout for every command. main() calls these; commands only declare their options.
// Not thread-safe: used from main() before a command runs.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace mpt::cli {

// An option's name as --help prints it: a positional in upper case (DB, KEY), any other
// option by its long name (--trie), or its short one when it has no long name.
std::string display_name(const CLI::Option& opt);

// The closest of names to given (an edit distance of at most a third of its length, at least
// 1), or empty when none is close: for "did you mean".
std::string closest_name(std::string_view given, const std::vector<std::string>& names);

// Puts a command's arguments (those after its name) in an order CLI11 reads the same way
// whatever order they were typed in: every flag (an option that takes no value) goes first,
// so that an option's value is the next argument that is not a flag (`--verify --json FILE`
// is `--json --verify FILE`) and no flag is taken as a multi-value option's value. After "--"
// nothing moves. Returns the usage message (without the command's name) for an option sub
// does not know or an option without its value; empty when all is well.
std::string order_arguments(const CLI::App& sub, std::vector<std::string>& args);

// The usage message (without the command's name) for a CLI11 parse error in sub: the
// argument named as --help names it, the detail in the project's words.
std::string usage_message(const CLI::App& sub, const CLI::ParseError& e);

// The help layout of every command: `Usage: mpt CMD [OPTIONS] ARGS`, positionals in upper
// case, values named by what they are (NAME, N, FILE) instead of CLI11's type tags, defaults
// at the end of the description, and footer after each command's own footer.
class HelpFormatter : public CLI::Formatter {
public:
    explicit HelpFormatter(std::string footer) : footer_(std::move(footer)) {}
    std::string make_usage(const CLI::App* app, std::string name) const override;
    std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;
    std::string make_option_opts(const CLI::Option* opt) const override;
    std::string make_option_desc(const CLI::Option* opt) const override;
    std::string make_option_usage(const CLI::Option* opt) const override;
    std::string make_footer(const CLI::App* app) const override;

private:
    std::string footer_;
};

}  // namespace mpt::cli
