// One register_* per subcommand: it binds the flags and, once parsing succeeds, leaves the
// function that runs the command in runner.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace mpt::cli {

using Runner = std::function<int()>;

void register_root(CLI::App& app, Runner& runner);
void register_build(CLI::App& app, Runner& runner);
void register_get(CLI::App& app, Runner& runner);
void register_dump(CLI::App& app, Runner& runner);
void register_check(CLI::App& app, Runner& runner);
void register_stats(CLI::App& app, Runner& runner);
void register_count_allocs(CLI::App& app, Runner& runner);

}  // namespace mpt::cli
