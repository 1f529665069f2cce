#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mpt/input/stream_limit.hpp>
#include <string>
#include <string_view>

namespace mpt {
namespace {

// The first number of the line of a /proc or /sys file that starts with key (a whole file of
// one number for an empty key), or -1.
long long read_number(const char* file, const char* key) {
    std::FILE* f = std::fopen(file, "r");
    if (f == nullptr) return -1;
    char line[256];
    long long v = -1;
    const size_t n = std::strlen(key);
    while (std::fgets(line, sizeof line, f) != nullptr) {
        if (std::strncmp(line, key, n) != 0) continue;
        if (std::sscanf(line + n, "%lld", &v) != 1) v = -1;  // "max" is no number
        break;
    }
    std::fclose(f);
    return v;
}

size_t cgroup_room() {
    std::FILE* f = std::fopen("/proc/self/cgroup", "r");
    if (f == nullptr) return SIZE_MAX;
    char line[512];
    size_t room = SIZE_MAX;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        if (std::strncmp(line, "0::", 3) != 0) continue;
        std::string_view dir(line + 3);
        while (!dir.empty() && (dir.back() == '\n' || dir.back() == '/')) dir.remove_suffix(1);
        const std::string base = "/sys/fs/cgroup" + std::string(dir);
        const long long max = read_number((base + "/memory.max").c_str(), "");
        const long long current = read_number((base + "/memory.current").c_str(), "");
        if (max >= 0) room = static_cast<size_t>(std::max(0LL, max - std::max(0LL, current)));
        break;
    }
    std::fclose(f);
    return room;
}

}  // namespace

size_t available_memory() noexcept {
    size_t room = SIZE_MAX;
    const long long avail_kb = read_number("/proc/meminfo", "MemAvailable:");
    if (avail_kb >= 0) room = static_cast<size_t>(avail_kb) * 1024;
    const long page = ::sysconf(_SC_PAGE_SIZE);
    long long vm_pages = -1;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%lld", &vm_pages) != 1) vm_pages = -1;
        std::fclose(f);
    }
    const size_t used = vm_pages > 0 && page > 0 ? static_cast<size_t>(vm_pages) * page : 0;
    for (const int which : {RLIMIT_AS, RLIMIT_DATA}) {
        struct rlimit r {};
        if (::getrlimit(which, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
            const size_t lim = static_cast<size_t>(r.rlim_cur);
            room = std::min(room, lim > used ? lim - used : 0);
        }
    }
    try {
        room = std::min(room, cgroup_room());
    } catch (...) {
        // No memory to look: the other bounds stand.
    }
    return room;
}

size_t stream_byte_limit() noexcept {
    const size_t room = available_memory();
    return std::max<size_t>(room / 4, size_t{1} << 20);
}

}  // namespace mpt
