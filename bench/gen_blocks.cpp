// mpt_gen_blocks: writes the blocks of bench/update_bench.sh.
//
//   mpt_gen_blocks N B SEED OUTDIR [OVERWRITES DELETES INSERTS]
//
// The base content is the pairs of `mpt_gen_kv N`: key i (0 <= i < N) is keccak256 of i as a
// big-endian uint64, its value keccak256 of the key. Block b (1 <= b <= B) overwrites
// OVERWRITES keys (default 10000), deletes DELETES keys (default 1000) and inserts INSERTS new
// keys (default 1000; ids N, N + 1, ...). The overwritten and deleted keys are distinct, drawn
// uniformly from the keys present before the block (std::mt19937_64 from SEED, reduced modulo
// the count, which is the same on every platform). An overwritten key's new value is
// keccak256(key || b as a big-endian uint32).
//
// Writes OUTDIR/block_b.json (a JSON array of pairs, in the order above, null deleting),
// OUTDIR/keys_b.txt (the block's keys, 0x hex, one a line, in the same order), and
// OUTDIR/content_b.json for b = 1 and b = B (the whole content after block b, a JSON object).
// Exit 2 with one line on stderr for bad arguments or an unwritable file.
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "mpt_gen_blocks: error: %s\n", message.c_str());
    std::exit(2);
}

uint64_t parse_count(std::string_view s, const char* what) {
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || end != s.data() + s.size()) {
        fail(std::string(what) + " must be a non-negative integer, got '" + std::string(s) + "'");
    }
    return n;
}

mpt::Hash256 key_of(uint64_t id) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(id >> (8 * (7 - b)));
    return mpt::keccak256(be);
}

// version 0: the base value; else the value written by block `version`.
mpt::Hash256 value_of(const mpt::Hash256& key, uint32_t version) {
    if (version == 0) return mpt::keccak256(key);
    uint8_t buf[36];
    std::copy(key.begin(), key.end(), buf);
    for (int b = 0; b < 4; ++b) buf[32 + b] = static_cast<uint8_t>(version >> (8 * (3 - b)));
    return mpt::keccak256(buf);
}

class Writer {
public:
    explicit Writer(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
        if (f_ == nullptr) fail("cannot write " + path);
        buf_.reserve(1 << 20);
    }
    ~Writer() {
        flush();
        if (std::fclose(f_) != 0) fail("cannot write " + path_);
    }
    std::string& buf() { return buf_; }
    void maybe_flush() {
        if (buf_.size() >= (1 << 20) - 256) flush();
    }

private:
    void flush() {
        if (std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
            fail("cannot write " + path_);
        }
        buf_.clear();
    }
    std::string path_;
    FILE* f_;
    std::string buf_;
};

void append_quoted(std::string& out, const mpt::Hash256& h) {
    out += "\"0x";
    mpt::append_hex_digits(out, h);
    out += '"';
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5 && argc != 8) {
        fail("usage: mpt_gen_blocks N B SEED OUTDIR [OVERWRITES DELETES INSERTS]");
    }
    const uint64_t n = parse_count(argv[1], "N");
    const uint64_t blocks = parse_count(argv[2], "B");
    const uint64_t seed = parse_count(argv[3], "SEED");
    const std::string dir = argv[4];
    const uint64_t overwrites = argc == 8 ? parse_count(argv[5], "OVERWRITES") : 10000;
    const uint64_t deletes = argc == 8 ? parse_count(argv[6], "DELETES") : 1000;
    const uint64_t inserts = argc == 8 ? parse_count(argv[7], "INSERTS") : 1000;

    std::vector<uint64_t> live(n);  // ids of the keys present
    for (uint64_t i = 0; i < n; ++i) live[i] = i;
    std::vector<uint32_t> version(n + blocks * inserts, 0);  // by id
    uint64_t next_id = n;
    std::mt19937_64 rng(seed);

    for (uint64_t b = 1; b <= blocks; ++b) {
        const uint64_t drawn = overwrites + deletes;
        if (drawn > live.size()) fail("a block draws more keys than the trie holds");
        // A partial Fisher-Yates shuffle: live[0, drawn) are distinct uniform draws.
        for (uint64_t j = 0; j < drawn; ++j) {
            const uint64_t r = j + rng() % (live.size() - j);
            std::swap(live[j], live[r]);
        }
        const std::string tag = std::to_string(b);
        {
            Writer block(dir + "/block_" + tag + ".json");
            Writer keys(dir + "/keys_" + tag + ".txt");
            block.buf() += "[\n";
            bool first = true;
            auto pair = [&](uint64_t id, const mpt::Hash256* value) {
                const mpt::Hash256 key = key_of(id);
                block.buf() += first ? "[" : ",\n[";
                first = false;
                append_quoted(block.buf(), key);
                block.buf() += ", ";
                if (value != nullptr) {
                    append_quoted(block.buf(), *value);
                } else {
                    block.buf() += "null";
                }
                block.buf() += ']';
                block.maybe_flush();
                keys.buf() += "0x";
                mpt::append_hex_digits(keys.buf(), key);
                keys.buf() += '\n';
                keys.maybe_flush();
            };
            for (uint64_t j = 0; j < overwrites; ++j) {
                version[live[j]] = static_cast<uint32_t>(b);
                const mpt::Hash256 v = value_of(key_of(live[j]), version[live[j]]);
                pair(live[j], &v);
            }
            for (uint64_t j = overwrites; j < drawn; ++j) pair(live[j], nullptr);
            for (uint64_t j = 0; j < inserts; ++j) {
                const uint64_t id = next_id++;
                const mpt::Hash256 v = value_of(key_of(id), 0);
                pair(id, &v);
            }
            block.buf() += "\n]\n";
        }
        // Drop the deleted ids (live[overwrites, drawn)), then add the inserted ones.
        for (uint64_t j = drawn; j-- > overwrites;) {
            live[j] = live.back();
            live.pop_back();
        }
        for (uint64_t id = next_id - inserts; id < next_id; ++id) live.push_back(id);

        if (b == 1 || b == blocks) {
            Writer content(dir + "/content_" + tag + ".json");
            content.buf() += "{\n";
            for (size_t j = 0; j < live.size(); ++j) {
                const mpt::Hash256 key = key_of(live[j]);
                append_quoted(content.buf(), key);
                content.buf() += ": ";
                append_quoted(content.buf(), value_of(key, version[live[j]]));
                content.buf() += j + 1 < live.size() ? ",\n" : "\n";
                content.maybe_flush();
            }
            content.buf() += "}\n";
        }
    }
    return 0;
}
