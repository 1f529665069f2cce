// A writer of SQLite index b-trees, the storage of a WITHOUT ROWID table, from records given
// in key order: every page is filled before the next one begins, and the levels above are
// built as the leaves are, so the records are read once and the pages come out in one pass.
// SQLite lays a table out this densely only when it copies a whole table into an empty one.
//
// The format is SQLite's file format 4 (https://www.sqlite.org/fileformat2.html): index
// b-tree pages (1.6), cells with their overflow chains (1.6, 1.7), records (2.1). Each
// record is stored once, in a leaf or, as a divider, in an interior page; no page is empty.
// Pages carry no reserved bytes.
//
// Thread safety: an object is used by one thread at a time.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

#include <functional>
#include <vector>

namespace mpt {

// Appends the SQLite record (integer, blob, blob) to out: a header of serial types, then
// the values. The integer takes the shortest serial type, as SQLite gives it.
void append_record(bytes& out, int64_t integer, bytes_view blob1, bytes_view blob2);

// Appends the SQLite record (blob, blob) to out: a preimages row (hash, preimage).
// REQUIRES: the header fits in one varint byte of its own length (blobs under 8 KiB or so).
void append_blob_record(bytes& out, bytes_view a, bytes_view b);

class IndexBtreeWriter {
public:
    // Receives a finished page. The view is valid during the call.
    using PageWriter = std::function<Status(uint32_t page_number, bytes_view page)>;

    // Pages are numbered from first_page up, in the order they are handed to write, but for
    // the root, which is handed over last, numbered root_page.
    // The page that holds the byte at lock_byte (SQLite's lock-byte page: the byte at 1 GiB,
    // PENDING_BYTE) is never used, as SQLite never uses it: a file that references it is
    // corrupt. Only tests give another lock_byte.
    // REQUIRES: page_size is a power of two in [512, 65536]; root_page < first_page.
    IndexBtreeWriter(uint32_t page_size, uint32_t root_page, uint32_t first_page, PageWriter write,
                     uint64_t lock_byte = kLockByte);

    static constexpr uint64_t kLockByte = 0x40000000;

    // Adds a record. REQUIRES: it sorts after the record added before, in the table's key
    // order; an index b-tree out of order is a corrupt file, and nothing here can tell. It is
    // at least 3 bytes long (SQLite counts no cell as less than 4 bytes; append_record's are
    // 4 at least).
    Status add(bytes_view record);
    // Adds the record (integer, blob1, blob2) that append_record makes, as add does, its cell
    // made without the record first.
    Status add_record(int64_t integer, bytes_view blob1, bytes_view blob2);

    // Adds a record as add does, and notes where its bytes land: for a caller that writes a
    // stand-in of the real record's size and puts the real bytes in place at the end. Returns
    // the mark's number, from 0 up. REQUIRES: the record is at most max_local() bytes, so its
    // cell holds it whole, in a leaf or as a divider.
    Result<size_t> add_marked(bytes_view record);
    // Where a marked record is: its bytes end at byte `end` of page `page`; page 0 until that
    // page has been handed to write.
    struct Place {
        uint32_t page = 0;
        uint32_t end = 0;
    };
    const Place& place(size_t mark) const noexcept { return places_[mark]; }
    // The longest payload a cell holds whole.
    uint32_t max_local() const noexcept { return max_local_; }

    // Writes the pages still open, the root last; the writer is done. Returns the highest
    // page number written.
    Result<uint32_t> finish();

private:
    // One level's page being filled. A cell is its payload part (size, local bytes, first
    // overflow page), after its left child on an interior page; the cells are made in place,
    // in key order from the page's end down, and the header and pointers when it is written.
    struct Level {
        bytes page;                    // page_size bytes
        std::vector<uint32_t> starts;  // where each cell begins in page, in key order
        size_t cell_bytes = 0;         // the cells' sizes on the page, with their pointers
        // The cell that did not fit: the page is full, and the cell becomes the divider
        // above it once another cell comes after it.
        bool has_pending = false;
        bytes pending;
        uint32_t pending_child = 0;
        uint32_t pending_mark = kNoMark;
        std::vector<std::pair<uint32_t, uint32_t>> marked;  // (cell, mark) of marked cells
    };
    static constexpr uint32_t kNoMark = UINT32_MAX;

    Status push(size_t level, bytes_view cell, uint32_t child, uint32_t mark = kNoMark);
    // Room for a cell of size bytes (with its child) below the level's cells; where it begins.
    // REQUIRES: it fits.
    uint8_t* claim(Level& l, size_t size);
    void add_level();
    // The mark of cell i of the level, or kNoMark; forgotten there.
    uint32_t take_mark(Level& l, size_t i);
    // Writes the page of cells [0, n) of the level as page_number (0: the next number).
    Result<uint32_t> emit(size_t level, size_t n, uint32_t right_child, uint32_t page_number);
    Status make_cell(bytes_view record);
    Result<uint32_t> next_page();
    bool fits(const Level& l, size_t level, size_t cell_size) const noexcept;

    uint32_t page_size_;
    uint32_t root_page_;
    uint32_t next_page_;
    uint32_t lock_page_;  // never handed out
    uint32_t max_local_, min_local_;
    PageWriter write_;
    std::vector<Level> levels_;
    std::vector<Place> places_;
    bytes cell_;    // scratch: the cell being made
    bytes record_;  // scratch: a record add_record makes that overflows its cell
    bytes page_;    // scratch: an overflow page being written
};

}  // namespace mpt
