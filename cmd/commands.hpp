// One register_* per subcommand: it binds the flags and, once parsing succeeds, leaves the
// function that runs the command in runner.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace mpt::cli {

using Runner = std::function<int()>;

void register_root(CLI::App& app, Runner& runner);
void register_proof(CLI::App& app, Runner& runner);
void register_verify_range(CLI::App& app, Runner& runner);

}  // namespace mpt::cli
