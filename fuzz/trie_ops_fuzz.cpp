// Differential test of the in-memory Trie, its commits and reopened stored tries against a
// std::map oracle and the streaming StackTrie.
//
// The input is a program, one operation after another:
//   0xff                       checkpoint: commit, reopen from the store, compare everything
//                              (the first kMaxCheckpoints; later ones are skipped)
//   b, key bytes[, len, value] kind = b & 3 (0..2 put, 3 delete), key length = (b >> 2) & 7,
//                              alphabet = (b >> 5) & 3; a put's value has 1 + len % 40 bytes
// Keys are drawn from narrow alphabets so that they share prefixes, are prefixes of each
// other (values in branches) and collide; values of 1..40 bytes put nodes on both sides of
// the 32-byte embedding threshold. A checkpoint also runs at the end. Checkpoints verify the
// hash of every row they read, so they dominate the time of a run; their number is capped.
#include <map>
#include <mpt/ops/trie_file.hpp>
#include <mpt/store/node_store.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <optional>
#include <set>

#include "fuzz_check.hpp"

namespace {

using namespace mpt;
using Content = std::map<bytes, bytes>;

constexpr int kMaxCheckpoints = 4;

class Program {
public:
    Program(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    bool done() const noexcept { return pos_ == size_; }
    uint8_t next() noexcept { return pos_ < size_ ? data_[pos_++] : 0x5a; }

private:
    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
};

uint8_t in_alphabet(uint8_t x, unsigned alphabet) {
    switch (alphabet) {
        case 0:
            return x & 0x01;  // nibbles 0 | 0,1
        case 1:
            return x & 0x11;  // nibbles 0,1 | 0,1
        case 2:
            return x & 0x13;  // nibbles 0,1 | 0..3
        default:
            return x & 0x8f;  // nibbles 0,8 | 0..15
    }
}

// Collects the rows a build from scratch writes.
class RowSink : public NodeSink {
public:
    void put(bytes_view path, bytes_view rlp) override {
        FUZZ_CHECK(
            rows.emplace(bytes(path.begin(), path.end()), bytes(rlp.begin(), rlp.end())).second);
    }
    std::map<bytes, bytes> rows;
};

Hash256 oracle_root(const Content& c, std::map<bytes, bytes>* rows) {
    RowSink sink;
    StackTrie st(rows ? &sink : nullptr);
    for (const auto& [k, v] : c) FUZZ_CHECK(st.add(k, v).ok());
    const Hash256 root = st.finish();
    if (rows) *rows = std::move(sink.rows);
    return root;
}

void check_reads(const Trie& trie, const Content& oracle, const std::set<bytes>& touched,
                 size_t neighbours) {
    for (const auto& [k, v] : oracle) {
        auto got = trie.get(k);
        FUZZ_CHECK(got.ok() && got->has_value() && **got == v);
    }
    for (const bytes& k : touched) {
        if (oracle.count(k)) continue;
        auto got = trie.get(k);
        FUZZ_CHECK(got.ok() && !got->has_value());
    }
    // In-order iteration visits exactly the oracle's pairs.
    auto it = oracle.begin();
    bool match = true;
    FUZZ_CHECK(trie.for_each({},
                             [&](bytes_view k, bytes_view v) {
                                 if (it == oracle.end() || !bytes_equal(k, it->first) ||
                                     !bytes_equal(v, it->second)) {
                                     match = false;
                                     return false;
                                 }
                                 ++it;
                                 return true;
                             })
                   .ok());
    FUZZ_CHECK(match && it == oracle.end());
    // Neighbours of a few keys (each is a walk that verifies every row it passes, so not of
    // all of them).
    size_t n = 0;
    for (const bytes& k : touched) {
        if (n++ == neighbours) break;
        auto next = trie.next_key(k);
        auto prev = trie.prev_key(k);
        FUZZ_CHECK(next.ok() && prev.ok());
        const auto up = oracle.upper_bound(k);
        const auto low = oracle.lower_bound(k);
        FUZZ_CHECK(next->has_value() == (up != oracle.end()));
        if (up != oracle.end()) FUZZ_CHECK(**next == up->first);
        FUZZ_CHECK(prev->has_value() == (low != oracle.begin()));
        if (low != oracle.begin()) FUZZ_CHECK(**prev == std::prev(low)->first);
    }
}

struct State {
    MemoryNodeStore store;
    std::optional<TrieReader> reader;
    Trie trie;
    Content oracle;
    std::set<bytes> touched;
};

void checkpoint(State& s) {
    std::map<bytes, bytes> want_rows;
    const Hash256 want = oracle_root(s.oracle, &want_rows);
    auto root = s.trie.root_hash();
    FUZZ_CHECK(root.ok() && *root == want);
    check_reads(s.trie, s.oracle, s.touched, 0);

    auto batch = s.trie.commit();
    FUZZ_CHECK(batch.ok() && batch->root == want);
    FUZZ_CHECK(s.store.begin_write().ok());
    if (!s.reader) {
        auto id = s.store.create_trie("main", TrieKind::plain);
        FUZZ_CHECK(id.ok());
        auto info = s.store.find_trie("main");
        FUZZ_CHECK(info.ok() && info->has_value());
        s.reader.emplace(s.store, **info);
    }
    FUZZ_CHECK(apply_commit(s.store, s.reader->info().id, *batch).ok());
    FUZZ_CHECK(s.store.commit_write().ok());

    // The stored rows are exactly those of a build from scratch: no stale row survives an
    // update, and none is missing.
    std::map<bytes, bytes> rows;
    FUZZ_CHECK(s.store
                   .scan(s.reader->info().id, {},
                         [&](bytes_view p, bytes_view r) {
                             rows.emplace(bytes(p.begin(), p.end()), bytes(r.begin(), r.end()));
                             return true;
                         })
                   .ok());
    FUZZ_CHECK(rows == want_rows);
    auto info = s.store.find_trie("main");
    FUZZ_CHECK(info.ok() && info->has_value() && (*info)->root == want);
    auto report = check_trie(s.store, **info);
    FUZZ_CHECK(report.ok() && report->problems.empty() && report->rows == report->reachable);

    // Continue on the trie reopened from the store: later operations load nodes by path.
    s.trie = Trie::open(&*s.reader, want);
    check_reads(s.trie, s.oracle, s.touched, 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Program prog(data, size);
    State s;
    int checkpoints = 0;
    while (!prog.done()) {
        const uint8_t b = prog.next();
        if (b == 0xff) {
            if (checkpoints++ < kMaxCheckpoints) checkpoint(s);
            continue;
        }
        const unsigned kind = b & 3, key_len = (b >> 2) & 7, alphabet = (b >> 5) & 3;
        bytes key(key_len);
        for (uint8_t& x : key) x = in_alphabet(prog.next(), alphabet);
        s.touched.insert(key);
        if (kind == 3) {
            FUZZ_CHECK(s.trie.remove(key).ok());
            s.oracle.erase(key);
        } else {
            bytes value(1 + prog.next() % 40);
            for (uint8_t& x : value) x = prog.next();
            FUZZ_CHECK(s.trie.put(key, value).ok());
            s.oracle[key] = value;
        }
    }
    checkpoint(s);
    return 0;
}
