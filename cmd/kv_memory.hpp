// --memory and --tmp, the memory budget of the key/value commands (mpt root, mpt build) and
// where their sorts spill past it.
#pragma once

#include <mpt/ops/kv_root.hpp>

#include <CLI/CLI.hpp>

#include <string>

namespace mpt::cli {

struct KvMemoryFlags {
    size_t memory = 0;       // 0: default_kv_memory()
    std::string tmp;         // empty: $TMPDIR, else /tmp
    uint64_t max_input = 0;  // --max-input; 0: no limit

    bool given() const noexcept { return memory != 0 || !tmp.empty() || max_input != 0; }
    size_t budget() const noexcept { return memory != 0 ? memory : default_kv_memory(); }
    std::string tmp_dir() const;
};

// Adds --memory SIZE, --tmp DIR and --max-input SIZE to sub.
void add_kv_memory_flags(CLI::App* sub, KvMemoryFlags& flags);

// SIZE: a number of bytes with an optional K, M, G or T (powers of 1024), as 512M or 4G;
// 0 when it is not one.
size_t parse_memory_size(const std::string& text) noexcept;

}  // namespace mpt::cli
