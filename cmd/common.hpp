// What every subcommand shares: the exit-code table and the one-line error report.
#pragma once

#include <mpt/bytes.hpp>

#include <string>

namespace mpt::cli {

// The exit codes, the same for every command (man/mpt.1).
enum Exit : int {
    kOk = 0,         // success; valid; identical; every vector passed
    kNegative = 1,   // invalid proof or range, differences, a failed vector, key absent
    kInput = 2,      // usage or input error
    kStorage = 3,    // storage error
    kInternal = 4,   // internal error
};

int exit_code(const Error& e) noexcept;

// Prints "mpt: error: <where>: <what>" on stderr and returns the exit code.
int report(const Error& e, const std::string& where = {});
int report_usage(const std::string& message);

}  // namespace mpt::cli
