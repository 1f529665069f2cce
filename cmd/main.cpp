// mpt: the Ethereum Merkle Patricia Trie toolkit.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli_args.hpp"
#include "commands.hpp"
#include "common.hpp"

#include <mpt/core/keccak.hpp>
#include <mpt/store/sqlite_memory.hpp>

namespace {

// The command's exit code, with the exceptions that may escape a command turned into the
// documented lines (a new file the command registered for removal goes first): a failed write to
// stdout, and running out of memory or threads (one answer, exit 4: "out of memory").
int run_command(const mpt::cli::Runner& runner) noexcept {
    using namespace mpt::cli;
    try {
        return runner ? runner() : kInternal;
    } catch (const std::bad_alloc&) {
        remove_abnormal_exit_file();
        return report(mpt::Error{mpt::Errc::out_of_memory, "an allocation failed"});
    } catch (const std::system_error& e) {
        remove_abnormal_exit_file();
        // fmt::print throws when a write to stdout fails.
        if (std::ferror(stdout)) {
            return report_write_error(e.code().category() == std::generic_category() ||
                                              e.code().category() == std::system_category()
                                          ? e.code().value()
                                          : 0);
        }
        // std::thread's way of saying that no thread could be made.
        if (e.code() == std::errc::resource_unavailable_try_again) {
            return report(mpt::Error{mpt::Errc::out_of_memory,
                                     std::string("cannot start a thread: ") + e.what()});
        }
        return report(mpt::Error{mpt::Errc::internal, e.what()});
    } catch (const std::exception& e) {
        remove_abnormal_exit_file();
        return report(mpt::Error{mpt::Errc::internal, e.what()});
    } catch (...) {
        remove_abnormal_exit_file();
        return report(mpt::Error{mpt::Errc::internal, "unknown exception"});
    }
}

// An exception that leaves a worker thread (or a noexcept function) ends the process here: the
// same line and exit code as in run_command, never SIGABRT. Nothing is committed, so a trie
// file is as its last commit left it (the write-ahead log holds no partial transaction).
[[noreturn]] void on_terminate() noexcept {
    const char* line = "mpt: error: internal error: an exception escaped\n";
    if (const std::exception_ptr e = std::current_exception()) {
        try {
            std::rethrow_exception(e);
        } catch (const std::bad_alloc&) {
            line = "mpt: error: out of memory: an allocation failed\n";
        } catch (const std::system_error& se) {
            if (se.code() == std::errc::resource_unavailable_try_again) {
                line = "mpt: error: out of memory: cannot start a thread\n";
            }
        } catch (...) {
        }
    }
    mpt::cli::remove_abnormal_exit_file();
    mpt::cli::write_stderr(line);
    std::_Exit(mpt::cli::kInternal);
}

// `mpt --version`: the release, the commit it was configured from, the SQLite it runs on
// and the batch Keccak kernel this CPU runs.
std::string version_text() {
    return fmt::format("mpt {} (commit {}, SQLite {}, Keccak {})", MPT_VERSION, MPT_COMMIT,
                       mpt::sqlite_version(), mpt::keccak256_batch_kernel().name);
}

// MPT_KECCAK names the batch Keccak kernel (for tests and benchmarks); one this CPU lacks,
// or no kernel at all, is an error rather than a silent fallback. Empty when it is fine.
std::string keccak_switch_error() {
    const char* want = std::getenv("MPT_KECCAK");
    if (want == nullptr || std::string_view(want) == mpt::keccak256_batch_kernel().name) return {};
    std::string have;
    for (const auto& k : mpt::keccak256_batch_kernels()) {
        if (k.available) have += std::string(have.empty() ? "" : ", ") + k.name;
    }
    return fmt::format("MPT_KECCAK={}: not a Keccak kernel this CPU runs (it runs: {})", want,
                       have);
}

// An on|off switch of the environment, unset meaning on: MPT_DIRECT_WRITES (new files' large
// writes past the page cache where the file system allows it) and MPT_HUGE_PAGES (large
// buffers asking for huge pages, advise_huge_pages). Empty when it is fine.
std::string on_off_switch_error(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || std::string_view(v) == "on" || std::string_view(v) == "off") return {};
    return fmt::format("{}={}: expected on or off", name, v);
}

}  // namespace

int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape): registration mistakes only
    using namespace mpt::cli;
    std::set_terminate(on_terminate);
    guard_standard_streams();
    // The arguments after argv[0], with the global -q/--quiet taken out wherever it stands
    // (up to "--"); `mpt help [COMMAND]` is `mpt [COMMAND] --help`.
    std::vector<std::string> args;
    try {
        bool quiet = false;
        bool after_dashes = false;
        for (int i = 1; i < argc; ++i) {
            const std::string_view a = argv[i];
            after_dashes = after_dashes || a == "--";
            if (!after_dashes && (a == "-q" || a == "--quiet")) {
                quiet = true;
                continue;
            }
            args.emplace_back(a);
        }
        set_quiet(quiet);
        if (std::string bad = keccak_switch_error(); !bad.empty()) return report_usage(bad);
        for (const char* name : {"MPT_DIRECT_WRITES", "MPT_HUGE_PAGES"}) {
            if (std::string bad = on_off_switch_error(name); !bad.empty()) return report_usage(bad);
        }
        if (!args.empty() && args[0] == "help") {
            if (args.size() > 2) return report_usage("help: give one COMMAND at most");
            args.erase(args.begin());
            args.emplace_back("--help");
        }
    } catch (const std::bad_alloc&) {
        return report(mpt::Error{mpt::Errc::out_of_memory, "an allocation failed"});
    }
    CLI::App app{"mpt: Ethereum Merkle Patricia Trie toolkit", "mpt"};
    app.formatter(std::make_shared<HelpFormatter>(
        "Global options, before or after the command: -q, --quiet: no progress and no notes on\n"
        "stderr (errors still). mpt help [COMMAND] is mpt [COMMAND] --help.\n"
        "Exit codes: 0 success, 1 negative answer, 2 usage or input error (a missing input\n"
        "file too), 3 storage error or a failed write to stdout, 4 internal error or out of\n"
        "memory; 141 killed by SIGPIPE.\n"
        "Manual: man mpt once installed; man -l man/mpt.1 in the source tree."));
    app.set_version_flag("--version", version_text());
    static bool quiet_shown = false;  // -q is taken out above; this is its --help line
    app.add_flag("-q,--quiet", quiet_shown, "No progress and no notes on stderr (errors still)");
    static bool commands_shown = false;  // --commands is answered below; this is its --help line
    app.add_flag("--commands", commands_shown,
                 "List the commands, one a line: name, manual page and summary, tab-separated");
    app.require_subcommand(1);

    // Registering a command costs more than most commands' work (CLI11 builds every option's
    // names and help up front), so a named command registers alone; only help, an unknown
    // name or no name at all registers them all.
    const std::span<const Command> commands = command_table();
    if (args.empty()) return report_usage("a command is required; `mpt help` lists them");
    if (args[0] == "--commands") {
        if (args.size() > 1) return report_usage("--commands takes nothing else: " + args[1]);
        return finish_output(run_command([&] {
            for (const Command& c : commands) {
                fmt::print("{}\tmpt-{}.1\t{}\n", c.name, c.name, c.summary);
            }
            return 0;
        }));
    }
    Runner runner;
    const std::string first = args[0];
    const auto named = std::find_if(commands.begin(), commands.end(),
                                    [&](const Command& c) { return first == c.name; });
    CLI::App* sub = nullptr;
    if (named != commands.end()) {
        sub = app.add_subcommand(named->name, named->summary);
        named->add(sub, runner);
        // Flags in any order; an unknown option named before CLI11 reads a thing.
        std::vector<std::string> rest(args.begin() + 1, args.end());
        if (std::string bad = order_arguments(*sub, rest); !bad.empty()) {
            return report_usage(first + ": " + bad);
        }
        args.resize(1);
        args.insert(args.end(), rest.begin(), rest.end());
    } else {
        for (const Command& c : commands) c.add(app.add_subcommand(c.name, c.summary), runner);
        // Name an unknown command or option rather than saying that a command is required.
        if (!first.empty() && first[0] != '-') {
            std::vector<std::string> names;
            for (const Command& c : commands) names.emplace_back(c.name);
            const std::string near = closest_name(first, names);
            return report_usage("unknown command: " + first +
                                (near.empty() ? "" : " (did you mean " + near + "?)"));
        }
        if (first != "-h" && first != "--help" && first != "--version") {
            return report_usage("unknown option: " + first +
                                " (a command comes first; `mpt help` lists them)");
        }
    }
    // Help and version text, written as every other output is (CLI11 would write to
    // std::cout, whose failures lose their errno).
    const auto print_exit = [&](const CLI::Error& e) {
        std::ostringstream out;
        std::ostringstream err;
        const int code = app.exit(e, out, err);
        write_stderr(err.str());
        return finish_output(run_command([&] {
            fmt::print("{}", out.str());
            return code;
        }));
    };
    try {
        std::reverse(args.begin(), args.end());  // CLI11 reads a vector from its back
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return print_exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return print_exit(e);
    } catch (const CLI::CallForVersion& e) {
        return print_exit(e);
    } catch (const CLI::ParseError& e) {
        if (sub == nullptr) return report_usage(e.what());
        return report_usage(first + ": " + usage_message(*sub, e));
    } catch (const std::bad_alloc&) {
        return report(mpt::Error{mpt::Errc::out_of_memory, "an allocation failed"});
    }
    return finish_output(run_command(runner));
}
