// mpt: the Ethereum Merkle Patricia Trie toolkit.
#include "commands.hpp"
#include "common.hpp"

#include <fmt/core.h>

#include <exception>

int main(int argc, char** argv) {
    using namespace mpt::cli;
    CLI::App app{"mpt: Ethereum Merkle Patricia Trie toolkit"};
    app.set_version_flag("--version", "mpt " MPT_VERSION);
    app.require_subcommand(1);
    app.footer(
        "Exit codes: 0 success, 1 negative answer, 2 usage or input error, 3 storage error, "
        "4 internal error.\nSee `mpt <command> --help` and man mpt.");

    Runner runner;
    register_root(app, runner);
    register_build(app, runner);
    register_get(app, runner);
    register_dump(app, runner);
    register_check(app, runner);
    register_stats(app, runner);
    register_count_allocs(app, runner);
    register_diff(app, runner);
    register_get_node(app, runner);
    register_proof(app, runner);
    register_verify_range(app, runner);

    // Name an unknown command rather than saying that one is required.
    if (argc > 1 && argv[1][0] != '-') {
        bool known = false;
        for (const CLI::App* sub : app.get_subcommands({})) known = known || sub->check_name(argv[1]);
        if (!known) return report_usage(std::string("unknown command: ") + argv[1]);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return report_usage(e.what());
    }
    try {
        return runner ? runner() : kInternal;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "mpt: error: out of memory\n");
        return kInternal;
    } catch (const std::exception& e) {
        fmt::print(stderr, "mpt: error: internal error: {}\n", e.what());
        return kInternal;
    }
}
