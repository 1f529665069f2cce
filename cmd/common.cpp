#include "common.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace mpt::cli {

int exit_code(const Error& e) noexcept { return static_cast<int>(category(e.code)); }

int report(const Error& e, const std::string& where) {
    std::string line = e.message();
    if (!where.empty()) line = where + ": " + line;
    // One line, whatever the detail held.
    for (char& c : line) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    fmt::print(stderr, "mpt: error: {}\n", line);
    return exit_code(e);
}

int report_usage(const std::string& message) {
    fmt::print(stderr, "mpt: error: {}\n", message);
    return kInput;
}

}  // namespace mpt::cli
