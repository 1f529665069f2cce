// mpt: the Ethereum Merkle Patricia Trie toolkit.
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iterator>
#include <new>
#include <sstream>
#include <string_view>
#include <system_error>

#include "commands.hpp"
#include "common.hpp"

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

}  // namespace

int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape): registration mistakes only
    using namespace mpt::cli;
    std::set_terminate(on_terminate);
    guard_standard_streams();
    CLI::App app{"mpt: Ethereum Merkle Patricia Trie toolkit"};
    app.set_version_flag("--version", "mpt " MPT_VERSION);
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 success, 1 negative answer, 2 usage or input error, 3 storage error or a "
        "failed write to stdout, 4 internal error or out of memory; 141 killed by "
        "SIGPIPE.\nManual: man mpt once installed; man -l man/mpt.1 in the source tree.");

    // Registering a command costs more than most commands' work (CLI11 builds every option's
    // names and help up front), so a named command registers alone; only help, an unknown
    // name or no name at all registers them all.
    struct Command {
        const char* name;
        void (*add)(CLI::App&, Runner&);
    };
    static constexpr Command kCommands[] = {
        {"root", register_root},
        {"build", register_build},
        {"get", register_get},
        {"dump", register_dump},
        {"check", register_check},
        {"stats", register_stats},
        {"count-allocs", register_count_allocs},
        {"diff", register_diff},
        {"get-node", register_get_node},
        {"proof", register_proof},
        {"verify-range", register_verify_range},
        {"keccak", register_keccak},
        {"rlp", register_rlp},
        {"tries", register_tries},
        {"drop", register_drop},
        {"copy", register_copy},
        {"vacuum", register_vacuum},
        {"tree", register_tree},
    };
    if (argc < 2) return report_usage("a command is required; `mpt --help` lists them");
    Runner runner;
    const std::string_view first = argv[1];
    const auto named = std::find_if(std::begin(kCommands), std::end(kCommands),
                                    [&](const Command& c) { return first == c.name; });
    if (named != std::end(kCommands)) {
        named->add(app, runner);
    } else {
        for (const Command& c : kCommands) c.add(app, runner);
        // Name an unknown command or option rather than saying that a command is required.
        if (!first.empty() && first[0] != '-') {
            return report_usage(std::string("unknown command: ") + argv[1]);
        }
        if (first != "-h" && first != "--help" && first != "--version") {
            return report_usage(std::string("unknown option: ") + argv[1] +
                                " (a command comes first; `mpt --help` lists them)");
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
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return print_exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return print_exit(e);
    } catch (const CLI::CallForVersion& e) {
        return print_exit(e);
    } catch (const CLI::ParseError& e) {
        return report_usage(e.what());
    } catch (const std::bad_alloc&) {
        return report(mpt::Error{mpt::Errc::out_of_memory, "an allocation failed"});
    }
    return finish_output(run_command(runner));
}
