// What the fuzz targets share: a check that aborts (so libFuzzer and the replay runner both
// report the input), a declaration of the entry point, and the input as a stream read in
// pieces.
#pragma once

#include <mpt/input/text_stream.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// An invariant of the library that the input broke: print where, then abort.
#define FUZZ_CHECK(cond)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                      \
        }                                                                                      \
    } while (0)

// text as a file read once in pieces of 64 bytes (an entry may take up to max_entry bytes), as
// the readers past --memory read a document: an unnamed file in memory holds it.
inline std::unique_ptr<mpt::TextStream> fuzz_text_stream(std::string_view text,
                                                         size_t max_entry = size_t{1} << 20) {
    const int fd = ::memfd_create("doc", 0);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    FUZZ_CHECK(::lseek(fd, 0, SEEK_SET) == 0);
    return std::make_unique<mpt::TextStream>(fd, "doc", 64, max_entry, false);
}
