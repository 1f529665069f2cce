// Runs the fuzz targets over the files of corpus folders (or single files), without
// libFuzzer: the regression run of the committed corpus in every build, sanitized or not. One
// program holds every target (each compiled with its LLVMFuzzerTestOneInput renamed
// mpt_fuzz_one_<name>, CMakeLists.txt), so that a build links it once.
//
//   mpt_fuzz_replay TARGET PATH...
//
// Prints "<target>: N inputs". A failed check aborts (non-zero exit, the input's path printed
// first); an unknown target, a missing path or a corpus without inputs is exit 2.
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

// MPT_FUZZ_TARGETS is X(rlp) X(node)...: the targets linked in (CMakeLists.txt).
#ifndef MPT_FUZZ_TARGETS
#error "MPT_FUZZ_TARGETS must list the targets: -DMPT_FUZZ_TARGETS=X(rlp)X(node)..."
#endif
#define X(name) extern "C" int mpt_fuzz_one_##name(const uint8_t* data, size_t size);
MPT_FUZZ_TARGETS
#undef X

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

struct Target {
    const char* name;
    int (*run)(const uint8_t* data, size_t size);
};
#define X(name) {#name, mpt_fuzz_one_##name},
constexpr Target kTargets[] = {MPT_FUZZ_TARGETS};
#undef X

}  // namespace

int main(int argc, char** argv) {
    const Target* target = nullptr;
    for (const Target& t : kTargets) {
        if (argc >= 3 && std::strcmp(argv[1], t.name) == 0) target = &t;
    }
    if (target == nullptr) {
        std::fprintf(stderr, "usage: %s TARGET CORPUS_DIR_OR_FILE...\n", argv[0]);
        std::fprintf(stderr, "targets:");
        for (const Target& t : kTargets) std::fprintf(stderr, " %s", t.name);
        std::fprintf(stderr, "\n");
        return 2;
    }
    const char* const name = target->name;
    std::vector<fs::path> files;
    for (int i = 2; i < argc; ++i) {
        const fs::path p(argv[i]);
        std::error_code ec;
        if (fs::is_directory(p, ec)) {
            for (const auto& e : fs::directory_iterator(p, ec)) {
                if (e.is_regular_file()) files.push_back(e.path());
            }
        } else if (fs::is_regular_file(p, ec)) {
            files.push_back(p);
        } else {
            std::fprintf(stderr, "%s: error: %s: no such file or folder\n", name, argv[i]);
            return 2;
        }
    }
    if (files.empty()) {
        std::fprintf(stderr, "%s: error: no inputs\n", name);
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
            std::fprintf(stderr, "%s: error: %s: cannot read\n", name, f.c_str());
            return 2;
        }
        // An exact-size heap copy, so that AddressSanitizer sees a read past the end.
        std::unique_ptr<uint8_t[]> buf(new uint8_t[data.size()]);
        std::copy(data.begin(), data.end(), buf.get());
        const std::string path = f.string();
        const size_t n = std::min(path.size(), sizeof g_current - 1);
        std::memcpy(g_current, path.data(), n);
        g_current[n] = '\0';
        target->run(buf.get(), data.size());
    }
    std::printf("%s: %zu inputs\n", name, files.size());
    return 0;
}
