#include <mpt/store/btree_writer.hpp>

#include <cstring>

namespace mpt {
namespace {

constexpr uint8_t kIndexInterior = 0x02;  // page types (fileformat2 1.6)
constexpr uint8_t kIndexLeaf = 0x0a;
constexpr size_t kLeafHeader = 8;
constexpr size_t kInteriorHeader = 12;  // with the right-most child
// SQLite's largest page number as Debian builds it (SQLITE_MAX_PAGE_COUNT).
constexpr uint32_t kMaxPageNumber = 1073741823;

void put_u16(uint8_t* p, uint32_t v) noexcept {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}

void put_u32(uint8_t* p, uint32_t v) noexcept {
    for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<uint8_t>(v);
}

uint32_t get_u32(const uint8_t* p) noexcept {
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// SQLite's varint (fileformat2 1.6): 7 bits per byte, most significant first, the high bit
// set on every byte but the last. REQUIRES: v < 2^56, which spares the 9-byte form.
// Writes it at out (8 bytes at most) and returns its length.
size_t put_varint(uint8_t* out, uint64_t v) noexcept {
    uint8_t groups[8];
    size_t n = 0;
    do {
        groups[n++] = static_cast<uint8_t>(v & 0x7f);
        v >>= 7;
    } while (v != 0);
    const size_t length = n;
    for (size_t i = 0; i < length; ++i) {
        --n;
        out[i] = static_cast<uint8_t>(groups[n] | (n != 0 ? 0x80 : 0));
    }
    return length;
}

void append_varint(bytes& out, uint64_t v) {
    uint8_t b[8];
    const size_t n = put_varint(b, v);
    out.insert(out.end(), b, b + n);
}

size_t varint_length(uint64_t v) noexcept {
    size_t n = 1;
    while (v >>= 7) ++n;
    return n;
}

}  // namespace

void append_blob_record(bytes& out, bytes_view a, bytes_view b) {
    // fileformat2 2.1: a header of serial types (12 + 2n for a blob of n bytes), then the
    // values.
    bytes header;
    append_varint(header, 12 + 2 * a.size());
    append_varint(header, 12 + 2 * b.size());
    out.push_back(static_cast<uint8_t>(header.size() + 1));
    out.insert(out.end(), header.begin(), header.end());
    out.insert(out.end(), a.begin(), a.end());
    out.insert(out.end(), b.begin(), b.end());
}

namespace {

// The header of the record (integer, blob of n1 bytes, blob of n2 bytes) and its integer's
// bytes: the record up to its blobs.
struct RecordHead {
    uint8_t bytes[4 * 8 + 8];  // four varints, the integer
    size_t size = 0;
};

RecordHead record_head(int64_t integer, size_t n1, size_t n2) noexcept {
    // Serial types (fileformat2 2.1): 0 and 1 are types 8 and 9, stored in no bytes (file
    // format 4); other integers take 1, 2, 3, 4, 6 or 8 bytes, whichever is the least that
    // holds them; a blob of n bytes is type 2n + 12.
    const uint64_t magnitude =
        integer < 0 ? ~static_cast<uint64_t>(integer) : static_cast<uint64_t>(integer);
    uint64_t int_type;
    size_t int_bytes;
    if (integer == 0 || integer == 1) {
        int_type = 8 + static_cast<uint64_t>(integer);
        int_bytes = 0;
    } else if (magnitude <= 0x7f) {
        int_type = 1, int_bytes = 1;
    } else if (magnitude <= 0x7fff) {
        int_type = 2, int_bytes = 2;
    } else if (magnitude <= 0x7fffff) {
        int_type = 3, int_bytes = 3;
    } else if (magnitude <= 0x7fffffff) {
        int_type = 4, int_bytes = 4;
    } else if (magnitude <= 0x7fffffffffff) {
        int_type = 5, int_bytes = 6;
    } else {
        int_type = 6, int_bytes = 8;
    }
    const uint64_t type1 = 2 * n1 + 12;
    const uint64_t type2 = 2 * n2 + 12;
    // The header's length counts itself; with three serial types it is under 128, one byte.
    const size_t header = 1 + varint_length(int_type) + varint_length(type1) + varint_length(type2);
    RecordHead out;
    for (const uint64_t v : {uint64_t{header}, int_type, type1, type2}) {
        out.size += put_varint(out.bytes + out.size, v);
    }
    for (size_t i = int_bytes; i > 0; --i) {
        out.bytes[out.size++] =
            static_cast<uint8_t>(static_cast<uint64_t>(integer) >> (8 * (i - 1)));
    }
    return out;
}

}  // namespace

void append_record(bytes& out, int64_t integer, bytes_view blob1, bytes_view blob2) {
    const RecordHead head = record_head(integer, blob1.size(), blob2.size());
    out.reserve(out.size() + head.size + blob1.size() + blob2.size());
    out.insert(out.end(), head.bytes, head.bytes + head.size);
    out.insert(out.end(), blob1.begin(), blob1.end());
    out.insert(out.end(), blob2.begin(), blob2.end());
}

IndexBtreeWriter::IndexBtreeWriter(uint32_t page_size, uint32_t root_page, uint32_t first_page,
                                   PageWriter write, uint64_t lock_byte)
    : page_size_(page_size),
      root_page_(root_page),
      next_page_(first_page),
      lock_page_(static_cast<uint32_t>(lock_byte / page_size + 1)),
      // The most and the least of a payload an index page keeps in the cell (fileformat2
      // 1.6, with the usable size equal to the page size): at least four cells fit a page.
      max_local_((page_size - 12) * 64 / 255 - 23),
      min_local_((page_size - 12) * 32 / 255 - 23),
      write_(std::move(write)) {}

Result<uint32_t> IndexBtreeWriter::next_page() {
    if (next_page_ == lock_page_) ++next_page_;
    if (next_page_ > kMaxPageNumber) {
        return {Errc::storage_full, "more pages than an SQLite file may hold"};
    }
    return next_page_++;
}

Status IndexBtreeWriter::make_cell(bytes_view record) {
    // A payload longer than max_local keeps a part in the cell and the rest in a chain of
    // overflow pages, each a next-page number and page_size - 4 bytes (fileformat2 1.6).
    const size_t payload = record.size();
    size_t local = payload;
    if (payload > max_local_) {
        const size_t surplus = min_local_ + (payload - min_local_) % (page_size_ - 4);
        local = surplus <= max_local_ ? surplus : min_local_;
    }
    cell_.clear();
    append_varint(cell_, payload);
    cell_.insert(cell_.end(), record.begin(), record.begin() + static_cast<ptrdiff_t>(local));
    if (local == payload) return {};
    const size_t per_page = page_size_ - 4;
    const size_t chain = (payload - local + per_page - 1) / per_page;
    if (next_page_ + chain > kMaxPageNumber) {
        return {Errc::storage_full, "more pages than an SQLite file may hold"};
    }
    MPT_TRY(uint32_t number, next_page());
    cell_.resize(cell_.size() + 4);
    put_u32(cell_.data() + cell_.size() - 4, number);
    size_t at = local;
    for (size_t i = 0; i < chain; ++i) {
        page_.assign(page_size_, 0);
        // Each page names the next, which is not always number + 1 (the lock-byte page).
        uint32_t following = 0;
        if (i + 1 < chain) {
            MPT_TRY(following, next_page());
        }
        const size_t n = std::min(per_page, payload - at);
        put_u32(page_.data(), following);
        std::memcpy(page_.data() + 4, record.data() + at, n);
        at += n;
        MPT_RETURN_IF_ERROR(write_(number, page_));
        number = following;
    }
    return {};
}

bool IndexBtreeWriter::fits(const Level& l, size_t level, size_t cell_size) const noexcept {
    const size_t header = level == 0 ? kLeafHeader : kInteriorHeader;
    return header + l.cell_bytes + cell_size + 2 <= page_size_;
}

Status IndexBtreeWriter::add_record(int64_t integer, bytes_view blob1, bytes_view blob2) {
    const RecordHead head = record_head(integer, blob1.size(), blob2.size());
    const size_t payload = head.size + blob1.size() + blob2.size();
    if (payload > max_local_) {
        record_.clear();
        append_record(record_, integer, blob1, blob2);
        return add(record_);
    }
    // The cell whole: the payload's size, then the record. Where it joins the leaf being
    // filled (no page waits to be emitted, and it fits), it is made in place there.
    const auto make_cell = [&](uint8_t* p) {
        p += put_varint(p, payload);
        std::memcpy(p, head.bytes, head.size);
        p += head.size;
        if (!blob1.empty()) std::memcpy(p, blob1.data(), blob1.size());
        p += blob1.size();
        if (!blob2.empty()) std::memcpy(p, blob2.data(), blob2.size());
    };
    const size_t size = varint_length(payload) + payload;
    if (!levels_.empty() && !levels_[0].has_pending && fits(levels_[0], 0, size)) {
        make_cell(claim(levels_[0], size));
        return {};
    }
    cell_.resize(size);
    make_cell(cell_.data());
    return push(0, cell_, 0);
}

Status IndexBtreeWriter::add(bytes_view record) {
    MPT_RETURN_IF_ERROR(make_cell(record));
    return push(0, cell_, 0);  // nothing below changes cell_
}

Result<size_t> IndexBtreeWriter::add_marked(bytes_view record) {
    if (record.size() > max_local_) {
        return {Errc::internal, "a marked b-tree record does not fit its cell"};
    }
    MPT_RETURN_IF_ERROR(make_cell(record));
    places_.emplace_back();
    MPT_RETURN_IF_ERROR(push(0, cell_, 0, static_cast<uint32_t>(places_.size() - 1)));
    return places_.size() - 1;
}

uint32_t IndexBtreeWriter::take_mark(Level& l, size_t i) {
    for (auto m = l.marked.begin(); m != l.marked.end(); ++m) {
        if (m->first != i) continue;
        const uint32_t mark = m->second;
        l.marked.erase(m);
        return mark;
    }
    return kNoMark;
}

uint8_t* IndexBtreeWriter::claim(Level& l, size_t size) {
    const uint32_t at =
        (l.starts.empty() ? page_size_ : l.starts.back()) - static_cast<uint32_t>(size);
    l.starts.push_back(at);
    l.cell_bytes += size + 2;
    return l.page.data() + at;
}

void IndexBtreeWriter::add_level() {
    levels_.emplace_back();
    levels_.back().page.resize(page_size_);
}

Status IndexBtreeWriter::push(size_t level, bytes_view cell, uint32_t child, uint32_t mark) {
    if (levels_.size() == level) add_level();
    if (levels_[level].has_pending) {
        // The page is full and a cell comes after the one that did not fit: the page is
        // done, that cell divides it from the next, and the new cell begins the next.
        Level& l = levels_[level];
        MPT_TRY(const uint32_t page, emit(level, l.starts.size(), l.pending_child, 0));
        const bytes divider = std::move(levels_[level].pending);
        const uint32_t divider_mark = levels_[level].pending_mark;
        levels_[level].has_pending = false;
        levels_[level].pending_mark = kNoMark;
        // May add a level: no references kept.
        MPT_RETURN_IF_ERROR(push(level + 1, divider, page, divider_mark));
    }
    Level& l = levels_[level];
    const size_t size = cell.size() + (level == 0 ? 0 : 4);
    if (!fits(l, level, size)) {
        l.pending.assign(cell.begin(), cell.end());
        l.pending_child = child;
        l.pending_mark = mark;
        l.has_pending = true;
        return {};
    }
    if (mark != kNoMark) l.marked.emplace_back(static_cast<uint32_t>(l.starts.size()), mark);
    uint8_t* at = claim(l, size);
    if (level != 0) {
        put_u32(at, child);
        at += 4;
    }
    std::memcpy(at, cell.data(), cell.size());
    return {};
}

Result<uint32_t> IndexBtreeWriter::emit(size_t level, size_t n, uint32_t right_child,
                                        uint32_t page_number) {
    Level& l = levels_[level];
    const bool leaf = level == 0;
    const size_t header = leaf ? kLeafHeader : kInteriorHeader;
    // The cells are in place, from the page's end down (claim); only the header, the
    // pointers and the gap between them and the cells are written here: the page is reused.
    uint8_t* p = l.page.data();
    std::memset(p, 0, header);
    p[0] = leaf ? kIndexLeaf : kIndexInterior;
    put_u16(p + 3, static_cast<uint32_t>(n));
    uint32_t number = page_number;
    if (number == 0) {
        MPT_TRY(number, next_page());
    }
    for (size_t i = 0; i < n; ++i) {
        put_u16(p + header + 2 * i, l.starts[i]);
        if (!l.marked.empty()) {
            const uint32_t mark = take_mark(l, i);
            const uint32_t cell_end = i == 0 ? page_size_ : l.starts[i - 1];
            if (mark != kNoMark) places_[mark] = {number, cell_end};
        }
    }
    // Cells past the first n (a divider taken from the end) lie in the gap, and are zeroed.
    const size_t content = n == 0 ? page_size_ : l.starts[n - 1];
    std::memset(p + header + 2 * n, 0, content - (header + 2 * n));
    put_u16(p + 5, static_cast<uint32_t>(content == 65536 ? 0 : content));
    if (!leaf) put_u32(p + 8, right_child);
    l.starts.clear();
    l.marked.clear();
    l.cell_bytes = 0;
    MPT_RETURN_IF_ERROR(write_(number, l.page));
    return number;
}

Result<uint32_t> IndexBtreeWriter::finish() {
    if (levels_.empty()) add_level();  // no records: the root, an empty leaf
    uint32_t below = 0;                // the last page of the level below
    for (size_t level = 0;; ++level) {
        if (levels_[level].has_pending) {
            // The cell that did not fit is the last: alone on a page it needs a divider
            // before it, and the full page gives up its last cell for that.
            Level& l = levels_[level];
            const size_t n = l.starts.size();
            if (n < 2) return {Errc::internal, "b-tree page holds fewer than two cells"};
            const uint8_t* cell = l.page.data() + l.starts[n - 1];
            const uint8_t* cell_end = l.page.data() + l.starts[n - 2];
            const uint32_t divider_child = level == 0 ? 0 : get_u32(cell);
            const bytes divider(cell + (level == 0 ? 0 : 4), cell_end);
            const uint32_t divider_mark = take_mark(l, n - 1);
            bytes last = std::move(l.pending);
            const uint32_t last_child = l.pending_child;
            const uint32_t last_mark = l.pending_mark;
            l.has_pending = false;
            l.pending_mark = kNoMark;
            MPT_TRY(const uint32_t page, emit(level, n - 1, divider_child, 0));
            MPT_RETURN_IF_ERROR(push(level + 1, divider, page, divider_mark));
            MPT_RETURN_IF_ERROR(push(level, last, last_child, last_mark));
        }
        const size_t n = levels_[level].starts.size();
        if (level + 1 == levels_.size()) {
            MPT_RETURN_IF_ERROR(emit(level, n, below, root_page_));
            return std::max(root_page_, next_page_ - 1);
        }
        MPT_TRY(below, emit(level, n, below, 0));
    }
}

}  // namespace mpt
