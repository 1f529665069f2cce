#include <mpt/ops/trie_file_writer.hpp>

#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>

namespace mpt::build_detail {
namespace {

// The row of a branch whose 16 children are hashed, with no value: what the root of a large
// trie of random keys is, and each of the 16 branches below it, and the one size of such a
// row known before the hashing ends (kMaxBranchWithoutValue bytes).
constexpr size_t kPredictedBranchRlp = kMaxBranchWithoutValue;

// The rows written to the b-tree as the parts of a split build are done, on a thread of its
// own, while the others hash: the root branch's row first, and in a deep layout each branch's
// below it, as stand-ins of the size they have when predicted right, then part 0, part 1 and
// so on, each once it is in path order. The stand-ins are marked in the b-tree, to be put
// right once the hashing ends.
class RowWriterThread {
public:
    // ended, when given, is called on the writer's thread as it ends, for any reason.
    RowWriterThread(PartRowsOf rows, SplitLayout layout, IndexBtreeWriter& tree, TrieId trie,
                    std::function<void()> ended = {})
        : rows_(std::move(rows)),
          layout_(layout),
          tree_(tree),
          trie_(trie),
          ended_(std::move(ended)),
          done_(layout.parts, 0) {
        thread_ = std::thread([this] {
            try {
                status_ = run();
            } catch (const std::bad_alloc&) {
                // An exception would end the process from this thread: the error instead.
                status_ = Error{Errc::out_of_memory, "an allocation failed writing rows"};
            }
            if (ended_) ended_();
        });
    }
    ~RowWriterThread() {
        // On the way out of an error or an exception: the thread ends before what it uses.
        (void)stop();
    }
    RowWriterThread(const RowWriterThread&) = delete;
    RowWriterThread& operator=(const RowWriterThread&) = delete;

    // Part v is in path order (called on the thread that built it).
    void part_done(size_t v) {
        if (v >= layout_.parts) return;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_[v] = 1;
        }
        changed_.notify_all();
    }
    // The hashing is over: the thread writes the parts done and ends. Returns whether it
    // wrote them all.
    Result<bool> stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            over_ = true;
        }
        changed_.notify_all();
        if (thread_.joinable()) thread_.join();
        MPT_RETURN_IF_ERROR(status_);
        return written_ == layout_.parts;
    }
    // After stop(): the stand-ins' marks, the root's first, then the branches' below it.
    const std::vector<size_t>& stand_ins() const noexcept { return stand_ins_; }

private:
    Status stand_in(bytes_view path, bytes& record) {
        record.clear();
        append_record(record, trie_, path, bytes(kPredictedBranchRlp, 0));
        MPT_TRY(const size_t mark, tree_.add_marked(record));
        stand_ins_.push_back(mark);
        return {};
    }

    Status run() {
        bytes record;
        MPT_RETURN_IF_ERROR(stand_in(bytes_view(), record));
        bytes previous;  // the last path written (the empty one, so far)
        for (size_t v = 0; v < layout_.parts; ++v) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                changed_.wait(lock, [&] { return done_[v] != 0 || over_; });
                if (done_[v] == 0) return {};
            }
            if (layout_.deep && v % 16 == 0) {
                const uint8_t nibble = static_cast<uint8_t>(v / 16);
                MPT_RETURN_IF_ERROR(stand_in(bytes_view(&nibble, 1), record));
                previous.assign(1, nibble);
            }
            MPT_RETURN_IF_ERROR(rows_(v, [&](bytes_view path, bytes_view rlp) -> Status {
                // The b-tree is corrupt unless its keys increase: checked, not assumed.
                if (!bytes_less(previous, path)) {
                    return {Errc::internal, "rows out of path order at " + path_string(path)};
                }
                previous.assign(path.begin(), path.end());
                return tree_.add_record(trie_, path, rlp);
            }));
            written_ = v + 1;
        }
        return {};
    }

    PartRowsOf rows_;
    SplitLayout layout_;
    IndexBtreeWriter& tree_;
    TrieId trie_;
    std::function<void()> ended_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<char> done_;
    bool over_ = false;
    size_t written_ = 0;
    std::vector<size_t> stand_ins_;
    Status status_;
    std::thread thread_;
};

}  // namespace

// Ends a file after its nodes: finishes the nodes' b-tree, puts the stand-ins' rlp in place,
// writes the preimages' b-tree after it, and the image last; then names the file. nullopt
// when the name was taken meanwhile.
Result<std::optional<BuildResult>> finish_file(WholeFile& file, const FileImage& image,
                                               IndexBtreeWriter& nodes,
                                               const PreimageRecords& preimages,
                                               const BuildResult& result,
                                               std::span<const StandIn> stand_ins) {
    MPT_RETURN_IF_ERROR(file.end_tree(nodes));
    for (const StandIn& s : stand_ins) {
        // A record ends with its rlp.
        const IndexBtreeWriter::Place& place = nodes.place(s.mark);
        if (place.page == 0) return {Errc::internal, "a stand-in row was not written"};
        file.patch(place.page, place.end, s.rlp);
    }
    if (preimages) MPT_RETURN_IF_ERROR(file.add_tree({image.preimages_root, preimages}));
    MPT_TRY(const bool named, file.finish());
    if (!named) return kNotThisWay;
    return std::optional<BuildResult>(result);
}

Result<Overlapped> write_while_hashing(WholeFile& file, const BuildOptions& o,
                                       const PreimageRecords& preimages, const SplitRows& parts,
                                       const SplitHasher& hash) {
    const TrieKind kind = o.secure ? TrieKind::secure : TrieKind::plain;
    // The first pages, made with a stand-in root: the root hash is one fixed-size field of
    // the tries row, so the real one gives pages of the same number (checked below).
    MPT_TRY(FileImage image, new_file_image(o.trie, kind, Hash256{}));
    MPT_RETURN_IF_ERROR(file.begin(image));
    IndexBtreeWriter tree = file.tree(image.nodes_root);
    Overlapped r;
    RowWriterThread writer(parts.rows, parts.layout, tree, image.trie, parts.writer_ended);
    Result<SplitHash> hashed = hash([&](size_t v) { writer.part_done(v); });
    MPT_TRY(const bool all_parts, writer.stop());
    if (!hashed) return hashed.error();
    r.result = hashed->result;
    const std::vector<bytes>& top = hashed->top_rlps;
    if (!all_parts || top.size() != writer.stand_ins().size()) return r;
    std::vector<StandIn> stand_ins;
    for (size_t i = 0; i < top.size(); ++i) {
        if (top[i].size() != kPredictedBranchRlp) return r;
        stand_ins.push_back({writer.stand_ins()[i], top[i]});
    }
    MPT_TRY(FileImage real, new_file_image(o.trie, kind, r.result.root));
    if (real.pages.size() != image.pages.size() || real.nodes_root != image.nodes_root ||
        real.preimages_root != image.preimages_root || real.trie != image.trie) {
        return r;
    }
    // The pages the tree wrote into the image so far (none but the root, written at
    // finish) are taken over by the real image's.
    image.pages = std::move(real.pages);
    MPT_TRY(r.file, finish_file(file, image, tree, preimages, r.result, stand_ins));
    r.written = true;
    return r;
}

}  // namespace mpt::build_detail
