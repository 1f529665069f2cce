// How a key/value build writes its trie file (store/whole_file.hpp): the rows in path
// order after the image, or, for a build split into parts, each part's rows as it is done
// while the others hash (write_while_hashing). Internal to lib/mpt/ops/: bulk_build.cpp (a
// build in memory) and spilled_build.cpp (one from a sorter past its memory).
//
// Thread safety: as WholeFile; write_while_hashing runs a writer thread of its own.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/ops/path_order.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/whole_file.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace mpt::build_detail {

// The answer of a build that cannot make its file this way (see build_new_trie_file).
inline const std::optional<BuildResult> kNotThisWay;

// A secure build's preimages for the preimages table's b-tree: hands add each (hash,
// preimage) record once, in hash order. Empty when the build records none.
using PreimageRecords = decltype(WholeFileTree::records);

// A row the nodes' b-tree was given as a stand-in (IndexBtreeWriter::add_marked): its mark,
// and the rlp that takes the stand-in's place, of the same size.
struct StandIn {
    size_t mark;
    bytes_view rlp;
};

// Ends a file after its nodes: finishes the nodes' b-tree, puts the stand-ins' rlp in place,
// writes the preimages' b-tree after it, and the image last; then names the file. nullopt
// when the name was taken meanwhile.
Result<std::optional<BuildResult>> finish_file(WholeFile& file, const FileImage& image,
                                               IndexBtreeWriter& nodes,
                                               const PreimageRecords& preimages,
                                               const BuildResult& result,
                                               std::span<const StandIn> stand_ins = {});

// Writes the file of a trie whose root is known: the image, then the rows for_each_row
// hands over in path order, then the preimages; then names it. nullopt when the name was
// taken meanwhile. kViewsStay: the views for_each_row hands over stay valid to the end (else
// the last path is copied for the order check).
template <bool kViewsStay, typename ForEachRow>
Result<std::optional<BuildResult>> write_trie_file(WholeFile& file, const BuildOptions& o,
                                                   const BuildResult& result,
                                                   const PreimageRecords& preimages,
                                                   ForEachRow&& for_each_row) {
    MPT_TRY(FileImage image,
            new_file_image(o.trie, o.secure ? TrieKind::secure : TrieKind::plain, result.root));
    MPT_RETURN_IF_ERROR(file.begin(image));
    IndexBtreeWriter tree = file.tree(image.nodes_root);
    bytes_view previous;
    bytes previous_copy;
    bool first = true;
    MPT_RETURN_IF_ERROR(for_each_row([&](bytes_view path, bytes_view rlp) -> Status {
        // The b-tree is corrupt unless its keys increase: checked, not assumed.
        if (!first && !bytes_less(previous, path)) {
            return {Errc::internal, "rows out of path order at " + path_string(path)};
        }
        first = false;
        if constexpr (kViewsStay) {
            previous = path;
        } else {
            previous_copy.assign(path.begin(), path.end());
            previous = previous_copy;
        }
        return tree.add_record(image.trie, path, rlp);
    }));
    return finish_file(file, image, tree, preimages, result);
}

// Hands f(path, rlp) every row of part v of a split build, in path order.
using RowVisitor = std::function<Status(bytes_view path, bytes_view rlp)>;
using PartRowsOf = std::function<Status(size_t v, const RowVisitor& f)>;

// How a split build's rows come: `parts` parts in path order, each once it is done. Below the
// root (a split at depth 1) those are the 16 subtries of its children; a split at depth 2
// (deep) has 256, those of the children of the 16 branches below the root, whose rows come
// before the parts below them.
struct SplitLayout {
    size_t parts = PartSinks::kTopPart;
    bool deep = false;
};

// A split build that writes its rows while it hashes (RowWriterThread). The file is the one
// the build would write after the hashing, byte for byte. When a row above the parts turns
// out not to be the one predicted (the top branch stands lower, holds a value or an embedded
// child), or the file's first pages would differ, written is false: the caller writes the
// rows anew.
struct Overlapped {
    BuildResult result;
    bool written = false;
    std::optional<BuildResult> file;  // written: the result, or nullopt when the name was taken
};

// What the hashing of a split build gives: its result, and the rows above the parts when
// they are branches as the layout foresees: the root's (at the empty path), then in a deep
// layout the 16 below it; empty otherwise.
struct SplitHash {
    BuildResult result;
    std::vector<bytes> top_rlps;
};
// Hashes the parts, calling part_done(v) on the thread that built part v once its rows are
// all there, in path order.
using SplitHasher = std::function<Result<SplitHash>(const std::function<void(size_t)>& part_done)>;

// How the parts of a split build are written: their rows, their layout, and, when given,
// what the writer's thread calls as it ends, for any reason.
struct SplitRows {
    PartRowsOf rows;
    SplitLayout layout{};
    std::function<void()> writer_ended{};
};

// Writes the file of a split build while hash hashes its parts: each part's rows go to the
// b-tree as the part is done, the rows above the parts as stand-ins put right at the end (see
// Overlapped).
Result<Overlapped> write_while_hashing(WholeFile& file, const BuildOptions& o,
                                       const PreimageRecords& preimages, const SplitRows& parts,
                                       const SplitHasher& hash);

}  // namespace mpt::build_detail
