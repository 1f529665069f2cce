// mpt_proof_floor DB KEYS: the SQLite point-read floor of `mpt proof DB --keys KEYS` and of
// `mpt get DB --keys KEYS` (bench/query_bench.sh).
//
// For each key of KEYS (0x hex, one a line; the trie keys, the file's trie `main` being
// plain), the rows its proof reads are found first by proving it through a reader that
// records each path asked for (not timed). Then those rows are read again by path, in the
// same order, through the store's own connection and prepared statement (SqliteNodeStore::get:
// the pragmas and the query of every read) in one read transaction, each row's bytes touched:
// that is what is timed. Nothing is decoded, hashed or printed.
//
// Prints one JSON object: keys, rows, row_bytes, read_seconds (wall clock, the least of
// ROUNDS rounds, default 5).
#include <mpt/core/hex.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/store/sqlite_store.hpp>
#include "recording_reader.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using mpt::bench::RecordingReader;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "mpt_proof_floor: %s\n", what.c_str());
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4) fail("usage: mpt_proof_floor DB KEYS [ROUNDS]");
    const int rounds = argc == 4 ? std::atoi(argv[3]) : 5;
    auto store = mpt::SqliteNodeStore::open(argv[1], mpt::SqliteNodeStore::Mode::read_only);
    if (!store) fail(store.error().message());
    if (!(*store)->begin_read().ok()) fail("begin_read");
    auto info = (*store)->find_trie("main");
    if (!info || !*info) fail("no trie main");
    mpt::TrieReader reader(**store, **info);

    std::ifstream in(argv[2]);
    if (!in) fail(std::string("cannot read ") + argv[2]);
    std::vector<mpt::bytes> paths;
    size_t keys = 0;
    std::string line;
    RecordingReader recording(reader, paths);
    while (std::getline(in, line)) {
        auto key = mpt::from_hex(line);
        if (!key) fail("bad key: " + line);
        auto proof = mpt::prove(recording, (*info)->root, *key);
        if (!proof) fail(proof.error().message());
        ++keys;
    }

    double best = 1e9;
    size_t row_bytes = 0;
    for (int r = 0; r < rounds; ++r) {
        row_bytes = 0;
        unsigned sum = 0;
        const auto start = std::chrono::steady_clock::now();
        for (const mpt::bytes& p : paths) {
            auto row = (*store)->get((*info)->id, p);
            if (!row) fail(row.error().message());
            row_bytes += row->size();
            if (!row->empty()) sum += (*row)[row->size() - 1];
        }
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (s < best) best = s;
        if (sum == 1) std::fputc(' ', stderr);  // keeps the reads from being optimised away
    }
    std::printf("{\"keys\":%zu,\"rows\":%zu,\"row_bytes\":%zu,\"read_seconds\":%.6f}\n", keys,
                paths.size(), row_bytes, best);
    (*store)->end_read();
    return 0;
}
