// Runs a fuzz target over the files of corpus folders (or single files), without libFuzzer:
// the regression run of the committed corpus in every build, sanitized or not.
//
//   mpt_fuzz_<name>_replay PATH...
//
// Prints "<name>: N inputs". A failed check aborts (non-zero exit, the input's path printed
// first); a missing path or a corpus without inputs is exit 2.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_check.hpp"

#ifndef MPT_FUZZ_TARGET
#define MPT_FUZZ_TARGET "fuzz"
#endif

namespace fs = std::filesystem;

#if defined(__SANITIZE_ADDRESS__)
#define MPT_REPLAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MPT_REPLAY_ASAN 1
#endif
#endif
#ifdef MPT_REPLAY_ASAN
extern "C" void __sanitizer_set_death_callback(void (*callback)(void));
#endif

namespace {

// The input being run, named when the run dies (a failed check, a signal, a sanitizer
// report) so that the report can be traced to its file.
char g_current[4096];

void name_current() {
    const char prefix[] = "replay: while running ";
    // write(2) only: this runs inside a signal handler.
    if (::write(2, prefix, sizeof prefix - 1) < 0) return;
    if (::write(2, g_current, std::strlen(g_current)) < 0) return;
    if (::write(2, "\n", 1) < 0) return;
}

void on_fatal_signal(int sig) {
    name_current();
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path p(argv[i]);
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (const auto& e : fs::directory_iterator(p, ec)) {
                if (e.is_regular_file()) files.push_back(e.path());
            }
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else {
            std::fprintf(stderr, "%s: error: %s: no such file or folder\n", MPT_FUZZ_TARGET,
                         argv[i]);
            return 2;
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "%s: error: no inputs\n", MPT_FUZZ_TARGET);
        return 2;
    }
    std::sort(files.begin(), files.end());
    for (const int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, on_fatal_signal);
#ifdef MPT_REPLAY_ASAN
    __sanitizer_set_death_callback(name_current);
#endif
    for (const fs::path& f : files) {
        std::ifstream in(f, std::ios::binary);
        const std::vector<char> data((std::istreambuf_iterator<char>(in)),
                                     std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::fprintf(stderr, "%s: error: %s: cannot read\n", MPT_FUZZ_TARGET, f.c_str());
            return 2;
        }
        // An exact-size heap copy, so that AddressSanitizer sees a read past the end.
        std::unique_ptr<uint8_t[]> buf(new uint8_t[data.size()]);
        std::copy(data.begin(), data.end(), buf.get());
        const std::string name = f.string();
        const size_t n = std::min(name.size(), sizeof g_current - 1);
        std::memcpy(g_current, name.data(), n);
        g_current[n] = '\0';
        LLVMFuzzerTestOneInput(buf.get(), data.size());
    }
    std::printf("%s: %zu inputs\n", MPT_FUZZ_TARGET, files.size());
    return 0;
}
