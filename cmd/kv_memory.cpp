#include "kv_memory.hpp"

#include "common.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <limits>

namespace mpt::cli {

std::string KvMemoryFlags::tmp_dir() const {
    if (!tmp.empty()) return tmp;
    const char* env = std::getenv("TMPDIR");
    return env != nullptr && *env != '\0' ? std::string(env) : std::string("/tmp");
}

size_t parse_memory_size(const std::string& text) noexcept {
    size_t i = 0;
    unsigned long long v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
        const unsigned d = static_cast<unsigned>(text[i] - '0');
        if (v > (std::numeric_limits<unsigned long long>::max() - d) / 10) return 0;
        v = v * 10 + d;
        ++i;
    }
    if (i == 0) return 0;
    unsigned shift = 0;
    if (i < text.size()) {
        switch (std::toupper(static_cast<unsigned char>(text[i]))) {
            case 'K':
                shift = 10;
                break;
            case 'M':
                shift = 20;
                break;
            case 'G':
                shift = 30;
                break;
            case 'T':
                shift = 40;
                break;
            default:
                return 0;
        }
        ++i;
    }
    if (i != text.size()) return 0;
    if (shift != 0 && v > (std::numeric_limits<unsigned long long>::max() >> shift)) return 0;
    return static_cast<size_t>(v << shift);
}

void add_kv_memory_flags(CLI::App* sub, KvMemoryFlags& flags) {
    sub->add_option_function<std::string>(
           "--memory",
           [&flags](const std::string& text) {
               flags.memory = parse_memory_size(text);
               // Taken as asked (swap may hold it), but not in silence.
               if (const size_t limit = memory_limit(); flags.memory > limit && !quiet()) {
                   eprint(
                       "mpt: note: --memory {} is more than the {:.1f}G of memory this "
                       "process may take; an input that needs it may run out\n",
                       printable(text), static_cast<double>(limit) / (1 << 30));
               }
           },
           "Memory for key/value input or a --state document, as 512M or 4G; past it the sort "
           "spills to --tmp "
           "(default: a quarter of physical memory, at most 4G)")
        ->type_name("SIZE")
        ->check([](const std::string& text) -> std::string {
            const size_t v = parse_memory_size(text);
            if (v == 0) return "a size such as 512M or 4G (K, M, G, T: powers of 1024)";
            if (v < (size_t{1} << 20)) return "at least 1M";
            return {};
        });
    sub->add_option_function<std::string>(
           "--max-input",
           [&flags](const std::string& text) { flags.max_input = parse_memory_size(text); },
           "Refuse input past SIZE bytes, piped or not (input too large, exit 2), as 10G "
           "(default: no limit; temporary files keep a floor free)")
        ->type_name("SIZE")
        ->check([](const std::string& text) -> std::string {
            return parse_memory_size(text) == 0 ? "a size such as 512M or 10G" : std::string();
        });
    sub->add_option("--tmp", flags.tmp,
                    "Folder for the temporary files of a sort past --memory (default: $TMPDIR, "
                    "else /tmp)")
        ->type_name("DIR")
        ->check([](const std::string& dir) -> std::string {
            // Said before any input is read, where a sort would find it out at its first
            // spill (or, for a smaller input, never).
            if (dir.empty()) return "an empty folder name";
            std::error_code ec;
            const std::filesystem::file_type type = std::filesystem::status(dir, ec).type();
            if (type == std::filesystem::file_type::directory) return {};
            if (type == std::filesystem::file_type::not_found) {
                return printable(dir) + ": no such folder";
            }
            if (ec) return {};  // not known here (no permission): the sort says what it meets
            return printable(dir) + ": not a folder";
        });
}

}  // namespace mpt::cli
