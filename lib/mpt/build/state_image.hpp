// The parts of a state file written whole that its two builders share (state_bulk.cpp for a
// document in memory, state_spill.cpp for one sorted on disk): the first pages, with the tries
// table, and the preimages table's records. Internal to lib/mpt/build/.
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/tries_table.hpp>

#include <span>
#include <vector>

namespace mpt::build_detail {

// The record (blob, blob) of fileformat2 2.1: a header of serial types (12 + 2n for a blob of
// n bytes), then the values. REQUIRES: the header fits in one varint byte of its own length.
void append_blob_record(bytes& out, bytes_view a, bytes_view b);

struct StateImage {
    FileImage image;
    uint32_t preimages_root = 0;
    std::vector<TrieId> ids;  // of tries, in order
};

// The first pages of the file: the schema, one tries row per trie (ids from 1 in the order
// given, so that their rows' keys sort in that order), empty nodes and preimages tables.
Result<StateImage> make_state_image(std::span<const sqlite::TriesTable::NewTrie> tries);

}  // namespace mpt::build_detail
