// How much of a piped input the process reads before it gives up: a stream has no size to
// check first, and one larger than memory would otherwise end with the OOM killer.
//
// Thread safety: the functions read /proc and the resource limits; safe from any thread.
#pragma once

#include <cstddef>

namespace mpt {

// The memory this process can still take, in bytes: the least of the system's available
// memory (MemAvailable), the address space left under RLIMIT_AS and RLIMIT_DATA, and what
// its cgroup (v2) allows beyond its current use. SIZE_MAX when nothing says.
size_t available_memory() noexcept;

// The most bytes of a stream (standard input, a pipe) read_file and load_input keep: a
// quarter of available_memory() when reading starts, so that parsing what was read still
// fits. At least 1 MiB.
size_t stream_byte_limit() noexcept;

}  // namespace mpt
