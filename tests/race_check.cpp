// The multi-threaded builders on the same input as one thread: parse_kv in two halves, kv_root
// (split by first nibble, and its gathering fallback), stack_trie_root with sinks, a new trie file
// written whole (its rows written as the parts are hashed), and both from a spilling sort whose
// runs are written while the next is filled; the streamed state root on threads; and a
// witness's tries walked on threads while its changes are applied beside them. Meant for a
// ThreadSanitizer build (MPT_SANITIZE_THREAD), where any data race ends the run with a report; in
// any build, a root that differs from one thread's fails it.
//
//   mpt_race_check
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/state_spill.hpp>
#include <mpt/state/account.hpp>
#include <mpt/state/changes.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/trie.hpp>
#include <mpt/witness/apply.hpp>
#include <mpt/witness/check.hpp>

#include "test_util.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

using namespace mpt;
using mpt::test::word;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
    if (!ok) {
        std::fprintf(stderr, "mpt_race_check: FAIL %s\n", what.c_str());
        ++failures;
    }
}

// n writes of hashed keys; first_nibble >= 0 puts every key under that nibble. With
// empty_key, the empty key is written too.
std::string document(size_t n, int first_nibble, bool empty_key) {
    std::string text = "[";
    for (uint64_t i = 0; i < n; ++i) {
        uint8_t be[8];
        for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (56 - 8 * b));
        Hash256 key = keccak256(bytes_view(be, 8));
        if (first_nibble >= 0) key[0] = static_cast<uint8_t>(first_nibble << 4 | (key[0] & 0x0f));
        text += i == 0 ? "[\"" : ",[\"";
        text += to_hex(key) + "\",\"" + to_hex(keccak256(key)) + "\"]";
    }
    if (empty_key) text += ",[\"0x\",\"0x01\"]";
    return text + "]";
}

struct NullParts : PartSinks {
    struct Null : NodeSink {
        void put(bytes_view, bytes_view) override {}
    };
    std::array<Null, kTopPart + 1> parts;
    NodeSink* part(size_t v) override { return &parts[v]; }
    void done(size_t) override {}
};

void check(const std::string& name, const std::string& text) {
    auto input = parse_kv(text);
    if (!input) {
        expect(false, name + ": " + input.error().message());
        return;
    }
    // The document parsed in two halves at once: the same entries.
    auto halves = parse_kv(text, 2, 0);
    bool same = halves.ok() && halves->size() == input->size();
    for (size_t i = 0; same && i < input->size(); ++i) {
        same = bytes_equal((*halves)[i].key, (*input)[i].key) &&
               bytes_equal((*halves)[i].value, (*input)[i].value);
    }
    expect(same, name + ": parse_kv in two halves");
    for (bool secure : {false, true}) {
        const std::string what = name + (secure ? ", secure" : "");
        auto one = kv_root(*input, secure, 1);
        expect(one.ok(), what + ": kv_root");
        if (!one) continue;
        for (unsigned threads : {2u, 3u, 16u}) {
            auto many = kv_root(*input, secure, threads);
            expect(many.ok() && many->root == one->root && many->pairs == one->pairs,
                   what + ": kv_root on " + std::to_string(threads) + " threads");
        }
        const SortedPairs sorted = sorted_final_pairs(*input, secure);
        NullParts sinks;
        auto split = stack_trie_root(sorted.pairs, 3, kParallelRootMinPairs, &sinks);
        expect(split.ok() && *split == one->root, what + ": stack_trie_root with sinks");

        const std::filesystem::path dir =
            std::filesystem::temp_directory_path() / ("mpt_race_check_" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        BuildOptions o;
        o.secure = secure;
        o.threads = 3;
        auto built = build_new_trie_file((dir / "t.db").string(), *input, o);
        expect(built.ok() && built->has_value() && (*built)->root == one->root,
               what + ": a new file on 3 threads");

        const std::string doc = (dir / "doc.json").string();
        std::ofstream(doc, std::ios::binary) << text;
        for (const bool build : {false, true}) {
            SpillOptions so = SpillOptions::for_memory(size_t{1} << 20, dir.string());
            so.overlap = true;
            so.direct = true;  // each bucket read on a thread of its own, ahead of its turn
            so.spread_run_bytes = so.run_bytes / 4;  // seven runs written at once
            so.file_per_nibble = !build;             // each emptied on a thread of its own
            SpillFiles files(so);
            SpillingPairSorter sorter(files);
            KvStreamReader stream(mpt::test::text_stream(doc, 1 << 16, 1 << 20));
            stream.read_ahead(true);             // pieces parsed on a thread of their own,
            stream.parse_halves(true, 1 << 12);  // each in halves on two
            const Status sorted_ok = sort_kv_stream(stream, secure, secure, sorter);
            expect(sorted_ok.ok() && sorter.runs_spilled() > 1 && stream.pieces_guessed() > 0 &&
                       sorter.direct_file(),
                   what + ": a spilling sort");
            if (!sorted_ok.ok()) continue;
            if (!build) {
                auto root = kv_root_sorted(sorter, 3);
                expect(root.ok() && root->root == one->root, what + ": spilled root on 3 threads");
                continue;
            }
            auto file = build_new_trie_file_sorted((dir / "s.db").string(), sorter, o, files,
                                                   size_t{1} << 18);
            expect(file.ok() && file->has_value() && (*file)->root == one->root,
                   what + ": a spilled new file on 3 threads");
        }
        std::filesystem::remove_all(dir);
    }
}

// A state document past its budget, its root on one thread and on three (the account trie
// split by first nibble, each part's storage tries with it), from runs written while the
// next is filled.
void check_state() {
    std::string text = "{";
    for (uint64_t i = 0; i < 3000; ++i) {
        uint8_t be[8];
        for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (56 - 8 * b));
        const Hash256 h = keccak256(bytes_view(be, 8));
        text += i == 0 ? "\"" : ",\"";
        text += to_hex(bytes_view(h.data(), 20)) + "\": {\"balance\": \"" + std::to_string(i + 1) +
                "\", \"storage\": {";
        for (uint64_t k = 0; k < i % 7; ++k) {
            text += (k == 0 ? "\"0x" : ", \"0x") + std::to_string(k + 1) + "0\": \"0x" +
                    std::to_string(i % 9 + 1) + "0\"";
        }
        text += "}}";
    }
    text += "}";
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("mpt_race_state_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string doc = (dir / "state.json").string();
    std::ofstream(doc, std::ios::binary) << text;
    Hash256 roots[2];
    for (const unsigned threads : {1u, 3u}) {
        auto source = open_text_source(doc, 0, 1 << 12, 1 << 20);
        expect(source.ok() && source->stream != nullptr, "a state stream");
        if (!source || !source->stream) break;
        SpillOptions so = SpillOptions::for_memory(size_t{1} << 18, dir.string());
        so.overlap = threads > 1;
        auto r = streamed_state_root(*source->stream, so, threads);
        expect(r.ok() && r->doc.temp_files >= 1 && r->doc.temp_bytes > 0,
               "a streamed state root on " + std::to_string(threads) + " threads");
        if (r) roots[threads > 1] = r->info.root;
    }
    expect(roots[0] == roots[1], "the streamed state root on 3 threads is one thread's");
    std::filesystem::remove_all(dir);
}

// The rows of a trie of pairs, appended to nodes; its root.
Hash256 trie_rows(const std::map<bytes, bytes>& pairs, std::vector<bytes>& nodes) {
    Trie t;
    for (const auto& [k, v] : pairs) expect(t.put(k, v).ok(), "a put");
    auto batch = t.commit();
    expect(batch.ok(), "a commit");
    if (!batch) return kEmptyRoot;
    for (const auto row : batch->puts) nodes.emplace_back(row.rlp.begin(), row.rlp.end());
    return batch->root;
}

// A witness of every node of 3,000 accounts, every third with one of three storage tries
// (walkers on several threads reach the same nodes), and its keys: each account, and the
// slots of the ones with storage. Checked with changes to a tenth of the accounts (the walk
// on threads, the changes applied beside it), the counts and the root after the changes must
// be what the tries and a plain apply give.
void check_witness_walk() {
    Witness w;
    Hash256 storage_roots[3];
    for (uint64_t s = 0; s < 3; ++s) {
        std::map<bytes, bytes> slots;
        for (uint64_t k = 0; k < 50 * (s + 1); ++k) {
            const Hash256 key = keccak256(word(k));
            bytes v;
            encode_storage_value(v, word(k + s + 1));
            slots[bytes(key.begin(), key.end())] = v;
        }
        storage_roots[s] = trie_rows(slots, w.state);
    }
    std::map<bytes, bytes> accounts;
    std::string changes = "{";
    for (uint64_t i = 0; i < 3000; ++i) {
        const Hash256 h = keccak256(word(i));
        const bytes address(h.begin(), h.begin() + 20);
        Account a;
        a.nonce = i + 1;
        w.keys.push_back(address);
        if (i % 3 == 0) {
            a.storage_root = storage_roots[i % 9 / 3];
            for (uint64_t k = 0; k < 3; ++k) w.keys.emplace_back(word(k).begin(), word(k).end());
        }
        bytes v;
        encode_account(v, a);
        const Hash256 key = keccak256(address);
        accounts[bytes(key.begin(), key.end())] = v;
        if (i % 10 != 0) continue;
        changes += (changes.size() == 1 ? "\"" : ",\"") + to_hex(address) + "\": ";
        changes +=
            i % 100 == 0 ? "null" : "{\"balance\": \"0x7\", \"storage\": {\"0x1\": \"0x0\"}}";
    }
    changes += "}";
    const Hash256 root = trie_rows(accounts, w.state);
    auto doc = parse_changes_document(changes);
    expect(doc.ok(), "a changes document");
    if (!doc) return;
    const WitnessCheck c = check_witness(w, root, &*doc);
    expect(c.accounts == 3000 && c.storage_tries == 3 && c.slots == 300,
           "a witness walked on threads: every account, storage trie and slot");
    expect(c.reached == w.state.size() && c.superfluous.empty() && c.unresolved() == 0,
           "a witness walked on threads: every node reached, every key resolved");
    WitnessTries tries(w);
    auto applied = apply_changes(tries, root, *doc);
    expect(applied.ok() && c.post_root == applied->root,
           "a witness's changes applied beside the walk: the root of a plain apply");
}

}  // namespace

int main() {
    check_witness_walk();
    check_state();
    check("100000 pairs", document(100000, -1, false));
    check("10000 pairs and the empty key", document(10000, -1, true));
    check("10000 pairs under one nibble", document(10000, 0x7, false));
    if (failures != 0) return 1;
    std::printf("mpt_race_check: ok\n");
    return 0;
}
