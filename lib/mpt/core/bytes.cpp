#include <sys/mman.h>

#include <mpt/core/bytes.hpp>

#include <cstdlib>
#include <string_view>

namespace mpt {

bool env_switch_on(const char* name) noexcept {
    const char* v = std::getenv(name);
    return v == nullptr || std::string_view(v) != "off";
}

void advise_huge_pages(const void* p, size_t n) noexcept {
#if defined(MADV_HUGEPAGE)
    static const bool wanted = env_switch_on("MPT_HUGE_PAGES");
    if (!wanted) return;
    constexpr uintptr_t kHuge = uintptr_t{2} << 20;
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address rounded for madvise, never read
    if (begin < end) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    static_cast<void>(p), static_cast<void>(n);
#endif
}

}  // namespace mpt
