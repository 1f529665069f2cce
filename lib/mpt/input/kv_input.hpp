// Key/value input documents.
//
// Three shapes, told by the first byte after white space: a JSON object
// {"key": "value", ...} ('{'), or an array of pairs [["key", "value"], ...] ('[') applied in
// order, where null (or "") deletes; or the text form `mpt dump` prints ("0x"), a line
// `0x<key> 0x<value>` a pair, applied in order (an empty text: no pairs, the empty trie's
// dump). In JSON a string starting with 0x is hex (even length, hex digits only); any other
// string is its UTF-8 bytes (the ethereum/tests rule). A UTF-8 byte order mark before the
// document is skipped. The reader is a strict parser specialised for these shapes: it
// decodes straight into one arena and reports errors with line and column.
//
// Thread safety: value types and pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace mpt {

class KvInput {
public:
    size_t size() const noexcept { return entries_.size() + more_.size(); }
    // The view lives as long as this object (moves included).
    KvPair operator[](size_t i) const noexcept {
        const Entry& e = entry(i);
        return {{e.key, e.key_len}, {e.key + e.key_len, e.value_len}};
    }
    // A hint that entry i is read soon.
    void prefetch(size_t i) const noexcept { __builtin_prefetch(&entry(i)); }
    // True for the array form (pairs applied in order).
    bool ordered() const noexcept { return ordered_; }
    // Appends the entries of other, the next part of the same document, taking its buffers.
    void append(KvInput&& other);
    // Whether the entry whose key's bytes begin at p comes before the one whose key's begin
    // at q, for a reader that keeps keys' addresses rather than positions. REQUIRES: p and q
    // are the keys of two entries of this input.
    bool before(const uint8_t* p, const uint8_t* q) const noexcept;

private:
    friend class KvParser;
    // An entry's value is decoded right after its key, in the same arena: its bytes begin
    // where the key's end (16 bytes an entry, four to a cache line, where a pointer to the
    // value made it 24).
    struct Entry {
        const uint8_t* key;
        uint32_t key_len;
        uint32_t value_len;
    };
    // Entry i: the parsed piece's, then the appended pieces' (a choice of base, no branch).
    const Entry& entry(size_t i) const noexcept {
        const bool first = i < entries_.size();
        const Entry* base = first ? entries_.data() : more_.data();
        return base[first ? i : i - entries_.size()];
    }
    // The decoded strings, in the order of the document's parts. Entries point into these
    // buffers, which never move; a part's strings lie in its buffer in the document's order.
    struct Arena {
        std::unique_ptr<uint8_t[]> bytes;
        size_t size = 0;
    };
    size_t arena_of(const uint8_t* p) const noexcept;
    std::vector<Arena> arenas_;
    std::vector<Entry> entries_;
    // The entries of the pieces appended, in order: the first piece appended's are kept where
    // its parse put them, not copied into new memory.
    std::vector<Entry> more_;
    bool ordered_ = false;
};

// Parses a key/value document. Errors name the line, column and entry. At most UINT32_MAX
// entries.
Result<KvInput> parse_kv(std::string_view text);
// As parse_kv, the same entries and errors, a document of split_bytes or more cut in two near
// its middle and the halves parsed on two threads when threads > 1. On any error the
// document is parsed again whole, on this thread, for the error parse_kv gives.
Result<KvInput> parse_kv(std::string_view text, unsigned threads,
                         size_t split_bytes = size_t{8} << 20);

namespace kv_detail {

// The first 8 bytes of a key as a big-endian number, zero-padded: comparing these orders
// keys as compare_bytes does, except that ties need the full keys. The sorts of the pairs
// in memory and of the runs that spill compare these first.
inline uint64_t key_prefix(bytes_view key) noexcept {
    uint8_t b[8] = {};
    if (!key.empty()) std::memcpy(b, key.data(), std::min<size_t>(key.size(), 8));
    uint64_t v;
    std::memcpy(&v, b, 8);
    if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
    return v;
}

// Where a document read in pieces (kv_stream.hpp) stands at the start of a piece.
struct KvPieceState {
    bool started = false;  // its '{' or '[', or a text dump's first 0x, was read
    bool ordered = false;  // '[' or a text dump: pairs in order
    bool text = false;     // a text dump (`0x<key> 0x<value>` lines)
    bool closed = false;   // its closing bracket was read
    size_t entries = 0;    // entries in the pieces before
    size_t line = 1;       // where the piece begins: line, and bytes into it
    size_t column = 0;
};

// The scan for places where a JSON document may be cut into pieces: just after a ',' at
// depth 1, outside strings, where one entry ends and the next begins. Its state carries from
// one call to the next, over consecutive bytes.
struct CutScan {
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    // Scans [p, end): the place after the last cut in it (with first: the first, where the
    // scan then stops), nullptr when there is none.
    const char* scan(const char* p, const char* end, bool first) noexcept;
};

// Parses a piece of a document: its first piece holds the opening bracket; every piece but
// the last ends just after a ',' between two entries; the last holds the end. Updates state
// for the next piece. Errors as parse_kv, placed in the whole document.
Result<KvInput> parse_kv_piece(std::string_view text, bool last, KvPieceState& state);

}  // namespace kv_detail

// Reads a whole JSON file or text dump ("-" for standard input). A stream that is not a
// regular file is read up to its end, or up to and with the first control character that no
// JSON text holds (not tab, line feed or carriage return), or up to and with its first byte
// after white space (and a byte order mark) when that is not '{', '[', '"' or the '0' of a
// text dump (no document mpt reads is anything else), and in a text dump up to and with the
// first byte that is not a hex digit, 'x' or white space, so that an endless stream of bytes
// that cannot be input ends at once; the parser then reports that byte. A stream past
// stream_byte_limit() bytes is Errc::input_too_large.
Result<std::string> read_file(const std::string& path);

// A whole input document in memory, for reading once: a regular file is mapped read-only
// (no copy; the page cache is read in place), anything else ("-" for standard input, a
// pipe) is read. A mapped file truncated by another process while it is read raises SIGBUS
// on the lost pages; a caller that must not die of it catches that signal.
class InputText {
public:
    InputText() = default;
    InputText(InputText&& other) noexcept;
    InputText& operator=(InputText&& other) noexcept;
    ~InputText();

    // Text read by other means, kept in this object.
    static InputText from_string(std::string data) {
        InputText t;
        t.data_ = std::move(data);
        return t;
    }

    // Valid until this object is destroyed or assigned.
    std::string_view view() const noexcept;
    bool mapped() const noexcept { return map_ != nullptr; }

private:
    friend Result<InputText> load_input(const std::string& path, uint64_t max_input);
    void* map_ = nullptr;
    size_t map_size_ = 0;
    std::string data_;
};

// max_input (0: none): more bytes than that, a regular file's size or read from a stream, is
// Errc::input_too_large (input_limit_error), and a stream is read no further.
Result<InputText> load_input(const std::string& path, uint64_t max_input = 0);

// The error of an input of path past max_input bytes (--max-input).
Error input_limit_error(const std::string& path, uint64_t max_input);

// Decodes one string by the ethereum/tests rule: 0x-prefixed hex, else its bytes.
Result<bytes> decode_kv_string(std::string_view s);

// The final content of a document in key order, a run of pairs at a time: the last write of
// each key wins and deletions drop it. Keys view into the input, or, when secure, into
// hashed-key storage this object owns, where each key is replaced by its keccak256; values
// view into the input. The sort puts the keys into buckets (65536 by their first two bytes
// from 65536 entries up, 256 by their first byte from 4096, 16 by their first nibble from
// 16, else one) and sorts each bucket as a run reaches it. A run is whole buckets, at least
// about a thousand pairs: for
// hashed keys and 65536 entries or more, about that many, so that a caller that consumes each
// run before the next holds no more pairs than that. With fewer buckets, or keys that share a
// bucket, a run can be as large as the input.
//
// REQUIRES: the input outlives this object and is not moved meanwhile.
class SortedPairCursor {
public:
    // Made on up to `threads` threads (secure keys hashed, records put in buckets).
    SortedPairCursor(const KvInput& input, bool secure, unsigned threads = 1);
    SortedPairCursor(const SortedPairCursor&) = delete;
    SortedPairCursor& operator=(const SortedPairCursor&) = delete;
    SortedPairCursor(SortedPairCursor&&) noexcept = default;
    SortedPairCursor& operator=(SortedPairCursor&&) noexcept = default;

    // The next pairs in key order; empty at the end. The span is valid until the next call;
    // the bytes it views live as long as this object (moves included) and the input.
    std::span<const KvPair> next();
    // All the pairs next() has still to give, at once.
    std::vector<KvPair> rest();

    // Ends the cursor (next() gives nothing more) and hands over the storage the keys of a
    // secure cursor view, empty when not secure. Moving the vector keeps the views valid.
    std::vector<Hash256> take_hashed_keys() &&;

    // A part of the key space read on its own, as next() reads the whole: the pairs whose
    // keys start with one nibble. Ranges of different nibbles may be read on different
    // threads at once, not beside next(). next() may follow them, and then reads every
    // bucket again, with the same result.
    struct Range {
        size_t bucket = 0;  // the next bucket to sort and hand out
        size_t end = 0;
        std::vector<KvPair> run;
    };
    // Whether the buckets follow the first nibble, so that nibble_range can split them.
    bool splits_by_nibble() const noexcept { return bucket_bits_ >= 4; }
    // The keys that start with nibble v (v < 16), and for v = 0 also the empty key.
    // REQUIRES: splits_by_nibble().
    Range nibble_range(unsigned v) const noexcept;
    // Whether the buckets follow the first byte, so that byte_range can split them.
    bool splits_by_byte() const noexcept { return bucket_bits_ >= 8; }
    // The keys that start with byte b (b < 256), and for b = 0 also the empty key.
    // REQUIRES: splits_by_byte().
    Range byte_range(unsigned b) const noexcept;
    // The entries of the input whose keys fall in the range (before deduplication).
    size_t entries(const Range& range) const noexcept {
        return start_[range.end] - start_[range.bucket];
    }
    std::span<const KvPair> next(Range& range);

private:
    // A pair in place: its key's address in the low 48 bits of ref, the key's length in the
    // next 8 and the value's (which follows the key) in the top 8, so that the pair is read
    // without its entry. Else (a hashed key, the empty key, a key of 255 bytes or more, a
    // value of 256 or more) kByIndex and the entry's position in the input.
    struct Record {
        uint64_t prefix;  // the key's first 8 bytes, big-endian, zero-padded
        uint64_t ref;
    };
    static constexpr uint64_t kByIndex = uint64_t{0xff} << 48;
    Record record(uint32_t i) const noexcept;
    static bool by_index(const Record& r) noexcept { return (r.ref & kByIndex) == kByIndex; }
    bytes_view key_of(uint32_t i) const noexcept;
    bytes_view key_of(const Record& r) const noexcept;
    KvPair pair_of(const Record& r) const noexcept;
    // The order of two records whose keys share their first 8 bytes.
    bool less_same_prefix(const Record& a, const Record& b) const noexcept;
    // Puts the records of a bucket in key order, later writes of a key after earlier ones.
    void sort_bucket(Record* first, Record* last) const noexcept;
    size_t bucket_of(uint64_t prefix) const noexcept;
    // Puts the records of the input in their buckets (start_), slice p of `parts` at
    // where[p][b] on in bucket b; for 65536 buckets, twice through the buckets of the first
    // byte. One pass writes to 65536 places at once, more lines than the cache holds; two
    // write to 256 at a time.
    void scatter_once(unsigned parts, size_t n, std::vector<std::vector<uint32_t>>& where);
    void scatter_twice(unsigned parts, size_t n, const std::vector<std::vector<uint32_t>>& where);

    const KvInput* input_;
    std::vector<Hash256> hashed_keys_;
    std::unique_ptr<Record[]> records_;  // grouped by bucket, each bucket sorted when reached
    std::vector<uint32_t> start_;        // bucket b holds records_[start_[b], start_[b + 1])
    unsigned bucket_bits_ = 0;
    Range all_;  // what next() reads
};

// All the pairs of a SortedPairCursor, at once.
struct SortedPairs {
    std::vector<KvPair> pairs;
    std::vector<Hash256> hashed_keys;
};
SortedPairs sorted_final_pairs(const KvInput& input, bool secure);

}  // namespace mpt
