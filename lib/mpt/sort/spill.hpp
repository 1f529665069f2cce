// Sorting more records than memory holds, in unnamed temporary files. The key/value builds
// use it for their input's pairs (SpillingPairSorter: records spread over 256 buckets by
// their key's first byte, each bucket sorted in memory when it is read) and the bulk build
// for its rows (RunFile and RunMerger: sorted runs, merged k ways).
//
// A temporary file is made without a name (O_TMPFILE; where the file system cannot, made
// with a name that is removed at once), so it goes when its descriptor closes: on return,
// on an error, and when the process dies of any signal, SIGKILL included. Nothing is ever
// left in the folder.
//
// Thread safety: an object is used by one thread at a time, but for SpillFiles, which the
// threads of one build share.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

#include <array>
#include <atomic>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpt {

// The most a SpillingPairSorter's run holds in the buckets layout. There a run is only
// where entries wait to be spread over the buckets' chunks, in input order: a larger one
// sorts nothing better and takes more new memory (a 10M-pair root under --memory 512M, runs
// of 128 MiB against 16: 3.28 against 2.87 s; 4 and 8 MiB as 16).
inline constexpr size_t kSpreadRunBytes = size_t{16} << 20;
// The most runs a SpillingPairSorter holds at once where its writes go around the page
// cache with SpillOptions::overlap: the one being filled and those being written.
inline constexpr size_t kMaxRunsHeld = 8;

// How much a spilling sort may hold, where its files go, and a hook for tests.
struct SpillOptions {
    // Bytes of records a run holds before it goes to a file (a SpillingPairSorter's
    // buckets: at most spread_run_bytes).
    size_t run_bytes = size_t{256} << 20;
    size_t spread_run_bytes = kSpreadRunBytes;
    // Bytes of buffer each run being read or written takes.
    size_t buffer_bytes = size_t{1} << 20;
    // The most runs merged at once; more are merged in passes, a group of consecutive runs
    // into one run at a time. At least 2.
    size_t fan_in = 64;
    std::string tmp_dir = "/tmp";
    // A SpillingPairSorter writes full runs out on threads of their own while the next is
    // filled: two runs of run_bytes in memory at once (buckets around the page cache: up to
    // eight of spread_run_bytes in that room, so that the writes of a few wait for the disk
    // without stopping the filling).
    bool overlap = false;
    // A SpillingPairSorter's buckets: the bytes of one first byte's records buffered before
    // they go to the file as one chunk; 256 such buffers are in memory.
    size_t chunk_bytes = size_t{64} << 10;
    // The most memory one bucket read back may take: it is held twice (as read, then by its
    // keys' second byte), so a bucket of more than half of this is sorted in runs of this
    // size instead, merged. 0: half of run_bytes as set here.
    size_t bucket_bytes = 0;
    // A SpillingPairSorter's buckets go around the page cache (O_DIRECT): their chunks are
    // padded to kDirectAlign bytes, and each bucket is read while the one before is sorted.
    // Past the budget the cache would only hold records that are read once, at the cost of
    // pages taken from everything else (the input, on the next run, among them). Where the
    // file system refuses it, the file is written and read through the cache as any other.
    bool direct = false;
    // A SpillingPairSorter's buckets: those of each first nibble in a file of their own, so
    // that SpillingPairSorter::release_nibble frees their room while the others are read
    // (else all in one file, freed when every nibble is released or the sorter goes). Only
    // where nibbles are released as they are read: a file system that discards what it frees
    // took 2.2 s to free 16 files of 400 MB, 1.1 s for one of 6.4 GB.
    bool file_per_nibble = false;
    // A SpillingPairSorter's buckets: the bytes of chunks kept in memory rather than written,
    // the first ones to fill, so that a sort a little larger than its budget writes and reads
    // back only what does not fit.
    size_t hold_bytes = 0;
    // The bytes temporary files leave free on the file system of tmp_dir: a write that would
    // take it below is refused (storage_full) instead. nullopt: the least of kKeepFreeMax, a
    // twentieth of the file system, and half of what is free when the SpillFiles is made.
    std::optional<uint64_t> keep_free;
    // For tests: the write to a temporary file with this number (from 1, counted over all
    // the files of one SpillFiles) fails with ENOSPC; 0 for none.
    size_t fail_write = 0;

    // The split of a memory budget of `memory` bytes: half for one run, buffers of at most
    // 1 MiB, chunks of at most 2 MiB (the 256 of them an eighth of the budget: fewer and
    // larger writes of a direct file wait less); direct when a chunk is 128 KiB or more (a
    // budget of 256 MiB), so that the padding costs little.
    // REQUIRES: memory > 0.
    static SpillOptions for_memory(size_t memory, std::string tmp_dir);
};

// What O_DIRECT asks of a transfer's address, length and file offset, here.
inline constexpr size_t kDirectAlign = 4096;

// Bytes whose buffer starts at a multiple of kDirectAlign.
template <typename T>
struct DirectAllocator {
    using value_type = T;
    DirectAllocator() = default;
    template <typename U>
    DirectAllocator(const DirectAllocator<U>&) noexcept {}
    T* allocate(size_t n) {
        return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kDirectAlign}));
    }
    void deallocate(T* p, size_t) noexcept {
        ::operator delete (p, std::align_val_t{kDirectAlign});
    }
    friend bool operator==(const DirectAllocator&, const DirectAllocator&) noexcept { return true; }
};
// Grown without first filling what is written or read into it next.
using direct_bytes = std::vector<uint8_t, NoFill<DirectAllocator<uint8_t>>>;

// The temporary files of one sort (or of a build's sorts): where they go, and what was
// written to them. May be used from several threads at once. A file given back is emptied and
// kept for the next make_file(): a sort through a small budget makes and drops thousands of
// runs, and a new file costs the file system an inode, whose allocation ext4 makes slower with
// each one freed shortly before (most of a small-budget sort's time, measured).
// The most SpillOptions::keep_free takes by default: 1 GiB.
inline constexpr uint64_t kKeepFreeMax = uint64_t{1} << 30;

class SpillFiles {
public:
    explicit SpillFiles(const SpillOptions& o);
    SpillFiles(const SpillFiles&) = delete;
    SpillFiles& operator=(const SpillFiles&) = delete;
    ~SpillFiles();
    const SpillOptions& options() const noexcept { return o_; }
    // Bytes written to temporary files so far.
    uint64_t bytes_written() const noexcept { return bytes_written_; }
    // Files opened so far (those reused not counted again).
    size_t files_made() const noexcept { return files_; }

    // An empty unnamed file in the folder, open for reading and writing through the page
    // cache: one given back, or a new one. Errors: storage_full, storage_io.
    Result<int> make_file();
    // Takes back a file of make_file() that is no longer needed: emptied and kept for reuse,
    // or closed.
    void give_back(int fd) noexcept;
    // Whether fd now reads and writes around the page cache: false where the file system
    // refuses it. A transfer on it that the file system then refuses (EINVAL: not aligned as
    // it needs) is made again through the cache, and so is every one after.
    static bool make_direct(int fd) noexcept;
    // The bytes kept free on the temporary folder's file system (SpillOptions::keep_free).
    uint64_t keep_free() const noexcept { return keep_free_; }
    // Writes all of data at offset. Errors: storage_full (ENOSPC, EDQUOT, or less than
    // keep_free() left after it), storage_io.
    Status write(int fd, bytes_view data, uint64_t offset);
    // Reads n bytes at offset into p. Errors: storage_io (a short read: the file changed
    // under the process).
    Status read(int fd, uint8_t* p, size_t n, uint64_t offset) const;
    // For tests: the n-th write from now on fails as SpillOptions::fail_write says. Not while
    // another thread writes.
    void fail_after(size_t n) noexcept { o_.fail_write = writes_ + n; }

private:
    Error error(const char* what, int err) const;
    Status check_room(int fd, size_t n) const;
    SpillOptions o_;
    uint64_t keep_free_ = 0;
    std::atomic<uint64_t> bytes_written_{0};
    std::atomic<size_t> writes_{0};
    std::atomic<size_t> files_{0};
    std::mutex free_mu_;
    std::vector<int> free_;  // guarded by free_mu_
};

// A run of records (a key and a value each, of any bytes) written once, in order, then read
// back once, in order.
class RunFile {
public:
    // A new, empty run. Errors as SpillFiles::make_file.
    static Result<RunFile> create(SpillFiles& files);
    RunFile(RunFile&& other) noexcept;
    RunFile& operator=(RunFile&& other) noexcept;
    RunFile(const RunFile&) = delete;
    RunFile& operator=(const RunFile&) = delete;
    ~RunFile();

    // Appends a record. Errors as SpillFiles::write.
    Status add(bytes_view key, bytes_view value);
    // Appends a record whose value is value_head then value_tail.
    Status add(bytes_view key, bytes_view value_head, bytes_view value_tail);
    // Writes what is buffered; the run is complete and can be read.
    Status finish();
    size_t records() const noexcept { return records_; }

    // Reading, after finish(): the next record, false at the end. The views are valid until
    // the next call. Errors: storage_io (a short read: the file changed under the process).
    Result<bool> next(bytes_view& key, bytes_view& value);

    // After finish(): whether any record's key starts with a byte in [first, last) (the
    // empty key counts as byte 0).
    bool has_bytes(unsigned first, unsigned last) const noexcept {
        return starts_[last] > starts_[first];
    }

    // After finish(): a run that reads, on its own descriptor, the records of this one whose
    // keys start with a nibble in [first, last) (the empty key counts as nibble 0). Views of
    // one run may be read on different threads at once; the run must outlive them (its file
    // is emptied when it goes). Errors: storage_io.
    Result<RunFile> view(unsigned first, unsigned last) const {
        return view_bytes(16 * first, 16 * last);
    }
    // The same for keys that start with a byte in [first, last) (the empty key: byte 0).
    Result<RunFile> view_bytes(unsigned first, unsigned last) const;

private:
    explicit RunFile(SpillFiles& files, int fd) : files_(&files), fd_(fd) {}
    Status flush();
    Status fill(size_t need);

    // Closes the descriptor: a view's own, or the run's file, given back for reuse.
    void release() noexcept;

    SpillFiles* files_;
    int fd_ = -1;
    bool view_ = false;  // fd_ a second descriptor of another run's file
    bytes buf_;
    size_t at_ = 0;        // reading: where the next record begins in buf_
    uint64_t offset_ = 0;  // writing: bytes written; reading: bytes read into buf_
    uint64_t size_ = 0;    // bytes in the file, once finished: where reading ends
    size_t records_ = 0;
    // Where the records of each first byte begin (starts_[256]: the end); written so far.
    std::array<uint64_t, 257> starts_{};
    int bytes_started_ = 0;
};

// Merges runs of records sorted by key into one sequence in key order. Among records with
// equal keys the one from the latest run (the highest index) is taken and the others
// dropped: runs made from consecutive parts of an input, in its order, so keep the last
// write of a key.
class RunMerger {
public:
    explicit RunMerger(std::vector<RunFile> runs);
    // The next records in key order, copied out; empty at the end. Valid until the next call.
    // Errors as RunFile::next.
    Result<std::span<const KvPair>> next();

private:
    struct Head {
        bytes_view key;
        bytes_view value;
        uint64_t prefix = 0;  // key_prefix(key): most comparisons end on it
        bool done = false;    // the run is read to its end
    };
    // Reads the next record of the winning run and plays it up the tree.
    Status advance();
    // Whether run a's head comes before run b's: by key, equal keys the later run first,
    // a run read to its end after all.
    bool before(size_t a, size_t b) const noexcept;

    std::vector<RunFile> runs_;
    std::vector<Head> heads_;
    // A tree of losers over the runs' heads: node i < k (k runs) has children 2i and 2i + 1,
    // run r is leaf k + r; tree_[i] is the run that lost the match at node i, and tree_[0]
    // the run whose head comes first. Each record costs log2(k) comparisons.
    std::vector<size_t> tree_;
    bool started_ = false;
    struct Span {
        size_t at, key_len, value_len;  // a record's key, then its value, in batch_bytes_
    };
    std::vector<Span> spans_;
    bytes batch_bytes_;
    std::vector<KvPair> batch_;
};

// Merges runs into at most fan_in (as RunMerger does): groups of
// consecutive runs become one run each, in passes, so that the order of runs still follows
// the input. Errors as RunFile.
Result<std::vector<RunFile>> merge_to_fan_in(SpillFiles& files, std::vector<RunFile> runs);

// The final pairs of a SpillingPairSorter (or of some of their first bytes) in key order:
// deletions dropped, extras split from the values.
class SpilledPairStream {
public:
    virtual ~SpilledPairStream() = default;
    // The next pairs in key order, empty at the end; valid until the next call.
    virtual Result<std::span<const KvPair>> next() = 0;
    std::span<const bytes_view> extras() const noexcept { return extras_; }

protected:
    std::vector<KvPair> out_;
    std::vector<bytes_view> extras_;
};

// The final content of key/value entries added in input order, in key order: the last write
// of each key wins, an empty value deletes it (the rule of SortedPairCursor). Entries are
// kept in memory up to a run's bytes and sorted there when that is all. Past them, each
// full run goes to a temporary file, deletions kept, laid out one of two ways:
// - buckets (the default): the run's entries are not sorted but spread by their key's first
//   byte over 256 buckets, in input order, each bucket a list of chunks in one file (or in
//   its first nibble's, SpillOptions::file_per_nibble: release_nibble frees each), but
//   for the first chunks to fill, up to SpillOptions::hold_bytes, which stay in memory. The
//   final pairs of a first byte are its bucket read back into memory and sorted there, as a
//   run is, a group of one second byte at a time; a bucket too large to hold within
//   SpillOptions::bucket_bytes is sorted in runs of that size, merged. Each entry is written once
//   and read once, and no merge compares the runs' heads, so that the cost per entry of a spilled
//   sort is about an in-memory sort's. The last run, at finish(), is spread over the buckets'
//   buffers in memory and never written: it takes no more room there than in its arena.
// - runs: each run is sorted and written to a file of its own, and the runs are merged k
//   ways at the end (in passes past SpillOptions::fan_in).
//
// "Last" is the input's order: an entry's sequence number is its position in the input.
// Within a run, or a bucket read back, equal keys are ordered by it; runs hold consecutive
// parts of the input, and a bucket its entries in input order, so across runs the later run
// holds the later write.
//
// Each entry may carry extra bytes (a secure build's original key, for its preimage), handed
// back beside its pair.
//
// With SpillOptions::overlap full runs are spread or sorted and written on threads of their
// own, one after another in input order, while the calling thread goes on adding; their
// errors come back from a later add or finish.
class SpillingPairSorter {
public:
    enum class Layout { buckets, runs };
    explicit SpillingPairSorter(SpillFiles& files, Layout layout = Layout::buckets);
    ~SpillingPairSorter();
    SpillingPairSorter(const SpillingPairSorter&) = delete;
    SpillingPairSorter& operator=(const SpillingPairSorter&) = delete;
    Status add(bytes_view key, bytes_view value, bytes_view extra = {});
    // Ends the adding. Errors as RunFile.
    Status finish();
    // After finish(): the next final pairs in key order (no empty values), empty at the end,
    // with extras()[i] the extra bytes of pair i. Valid until the next call.
    Result<std::span<const KvPair>> next();
    std::span<const bytes_view> extras() const noexcept { return extras_; }
    // Entries added; runs written to files, the last run kept in the buckets' buffers
    // counted too (0: all in memory, no streams).
    size_t entries() const noexcept { return entries_; }
    size_t runs_spilled() const noexcept { return spilled_; }
    // Buckets whose final pairs were read in runs, merged, for being too large to hold
    // within bucket_bytes (so far: a count kept by the streams).
    size_t buckets_merged() const noexcept { return buckets_merged_; }
    // Whether the buckets' files are still direct (SpillOptions::direct): no transfer on
    // them was refused as such. False when there is none.
    bool direct_file() const noexcept;

    // After finish(), when runs were spilled: the final pairs whose keys start with nibble v
    // (v < 16; for v = 0 also the empty key), read apart from next(). Streams of different
    // nibbles may be read on different threads at once, and beside next().
    Result<std::unique_ptr<SpilledPairStream>> nibble_stream(unsigned v) const;
    // The same for the final pairs whose keys start with byte b (b < 256; for b = 0 also the
    // empty key).
    Result<std::unique_ptr<SpilledPairStream>> byte_stream(unsigned b) const;
    // After finish(), when runs were spilled: the caller reads none of the final pairs whose
    // keys start with nibble v again. A file of the buckets whose nibbles are all released is
    // emptied now, on a thread of its own (SpillOptions::file_per_nibble: v's own), where it
    // would otherwise be at the end (a file system that discards what it frees took a second
    // for 6 GB, and the process waited for it). Reading them after fails (internal).
    void release_nibble(unsigned v) const;
    // After finish(), when runs were spilled: how many first nibbles the entries' keys start
    // with (deletions counted). Below 2, the final keys make no branch of nibbles at the root,
    // and a split by nibble_stream is no use.
    unsigned nibbles_used() const noexcept;
    // After finish(), when runs were spilled: how many first bytes the entries' keys start
    // with (deletions counted, the empty key as byte 0).
    unsigned bytes_used() const noexcept;

private:
    struct Record {
        uint64_t prefix;  // the key's first 8 bytes, big-endian, zero-padded
        uint64_t at;      // the key, then the value, then the extra, in arena_
        uint32_t key_len;
        uint32_t value_len;
        uint32_t extra_len;
        uint32_t seq;  // the entry's position in the run
    };
    // The entries of one first byte, in input order: chunks of its file (file_of), then what
    // is buffered.
    struct Bucket {
        struct Chunk {
            uint64_t offset;  // in the bucket's file, unless held
            size_t size;
            std::unique_ptr<direct_bytes> held;  // the chunk's bytes, kept rather than written
        };
        std::vector<Chunk> chunks;
        direct_bytes tail;
        uint64_t size = 0;  // bytes in chunks and tail
        uint64_t entries = 0;
    };
    class BucketStream;
    // A sorter of runs of run_bytes, none written on another thread: a large bucket's.
    SpillingPairSorter(SpillFiles& files, size_t run_bytes);
    void reserve_run(bytes& arena, std::vector<Record>& records) const;
    // Sorts records (of keys in arena) by key from the byte at bit shift of the prefix on
    // (56: the first), equal keys by sequence, and keeps only the last of each key.
    static void sort_run(const uint8_t* arena, std::vector<Record>& records, int shift = 56);
    static Result<RunFile> write_run(SpillFiles& files, const bytes& arena,
                                     const std::vector<Record>& records);
    // Appends to out (and extras) the next pairs of sorted records from at on, deletions
    // skipped, up to a batch.
    static void emit(const uint8_t* arena, const std::vector<Record>& records, size_t& at,
                     std::vector<KvPair>& out, std::vector<bytes_view>& extras);
    // Writes a full run out as the layout says: sorted into runs_, or spread over buckets_.
    Status write_out(const bytes& arena, std::vector<Record>& records);
    // keep: the last run, held in the buckets' buffers instead of written.
    Status spread(const bytes& arena, const std::vector<Record>& records, bool keep);
    Status flush_bucket(size_t b);
    // The file of bucket b's chunks, and its size: one for all, or one for each first nibble
    // (SpillOptions::file_per_nibble).
    struct BucketFile {
        int fd = -1;
        uint64_t end = 0;
    };
    size_t file_index(size_t b) const noexcept { return file_per_nibble_ ? b / 16 : 0; }
    BucketFile& file_of(size_t b) noexcept { return bucket_files_[file_index(b)]; }
    int fd_of(size_t b) const noexcept { return bucket_files_[file_index(b)].fd; }
    size_t bucket_limit() const noexcept;
    Status spill();
    // Writes the run being filled out on this thread.
    Status spill_here();
    // How many of the 256 / width groups of width first bytes (16: nibbles, 1: bytes) the
    // runs' keys start with.
    unsigned starts_used(unsigned width) const noexcept;
    // The final pairs whose keys start with a byte in [first, last).
    Result<std::unique_ptr<SpilledPairStream>> stream_of_bytes(unsigned first, unsigned last) const;

    SpillFiles* files_;
    Layout layout_;
    size_t run_bytes_;
    bool overlap_;
    bytes arena_;
    std::vector<Record> records_;
    // Buffers being written on other threads, oldest first, with their results; and the
    // buffers of writes ended, for the next ones.
    template <typename Buffer>
    struct Writes {
        struct Write {
            std::unique_ptr<Buffer> buffer;
            std::shared_future<Status> done;
        };
        std::deque<Write> pending;
        std::vector<std::unique_ptr<Buffer>> spare;
        // A spare buffer, or a new one.
        std::unique_ptr<Buffer> take();
        // Waits for the oldest write: its result; its buffer goes to spare.
        Status wait_oldest();
        // Waits for every write: the first error.
        Status wait_all();
        // Waits for every write, their results dropped.
        void wait() const noexcept {
            for (const Write& w : pending) w.done.wait();
        }
    };
    // overlap: the full runs being written, each after the one before it (the buckets and
    // runs take them in input order), at most max_writing_ of them.
    struct Run {
        bytes arena;
        std::vector<Record> records;
    };
    Writes<Run> run_writes_;
    size_t max_writing_ = 1;
    // A direct file's chunks being written, at most kChunkWrites.
    static constexpr size_t kChunkWrites = 4;
    Writes<direct_bytes> chunk_writes_;
    std::vector<RunFile> runs_;
    std::array<Bucket, 256> buckets_;
    std::array<BucketFile, 16> bucket_files_;
    bool file_per_nibble_ = false;
    // SpillOptions::direct, until the first file is made: then whether it is direct. The
    // chunks are padded to kDirectAlign bytes if so.
    bool direct_ = false;
    mutable std::atomic<size_t> buckets_merged_{0};
    size_t held_bytes_ = 0;  // in chunks kept in memory (SpillOptions::hold_bytes)
    // release_nibble: the nibbles released, and the freeing of their files on other threads.
    mutable std::array<std::atomic<bool>, 16> released_{};
    mutable std::mutex release_mu_;
    mutable std::vector<std::future<void>> releases_;  // guarded by release_mu_
    size_t entries_ = 0;
    size_t spilled_ = 0;
    bool finished_ = false;
    // Reading: from memory (no run spilled) or from the streams.
    size_t next_record_ = 0;
    std::vector<RunFile> final_runs_;  // runs: at most fan_in, read through views
    std::unique_ptr<SpilledPairStream> all_;
    std::vector<KvPair> out_;
    std::vector<bytes_view> extras_;
};

}  // namespace mpt
