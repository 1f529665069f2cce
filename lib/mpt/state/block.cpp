#include <mpt/state/block.hpp>

#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <cstring>
#include <string>

namespace mpt {
namespace {

// One decoded item with the whole of its encoding.
struct Piece {
    rlp::Item item;
    bytes_view encoding;
    size_t offset = 0;  // in the block
};

class BlockReader {
public:
    explicit BlockReader(bytes_view block) : base_(block.data()), size_(block.size()) {}

    size_t offset(bytes_view at) const noexcept { return static_cast<size_t>(at.data() - base_); }

    Error fail(Errc code, size_t at, const std::string& what) const {
        return Error{code, what + " (byte " + std::to_string(at) + ")"};
    }

    // The next item of in, advancing in; an RLP error names what was being read.
    Result<Piece> next(bytes_view& in, const std::string& what) const {
        const bytes_view start = in;
        auto item = rlp::decode_item(in);
        if (!item) {
            const Error& e = item.error();
            std::string why = e.detail;
            if (why.empty() && e.code == Errc::rlp_truncated) {
                const bool at_end = start.data() + start.size() == base_ + size_;
                why = std::string("the item runs past the end of ") +
                      (at_end ? "the input" : "its list");
            }
            if (why.empty()) why = errc_name(e.code);
            return fail(e.code, offset(start), what + ": " + why);
        }
        Piece p;
        p.item = *item;
        p.encoding = start.first(start.size() - in.size());
        p.offset = offset(start);
        return p;
    }

    // The items of a list, each with its encoding.
    Result<std::vector<Piece>> items(const Piece& list, const std::string& what) const {
        std::vector<Piece> out;
        bytes_view in = list.item.payload;
        while (!in.empty()) {
            MPT_TRY(Piece p, next(in, what + " " + std::to_string(out.size() + 1)));
            out.push_back(p);
        }
        return out;
    }

private:
    const uint8_t* base_;
    size_t size_;
};

Result<Hash256> hash_field(const BlockReader& r, const std::vector<Piece>& header, size_t i,
                           const char* name) {
    const Piece& f = header[i];
    if (f.item.is_list || f.item.payload.size() != 32) {
        return r.fail(Errc::bad_input, f.offset,
                      std::string("header field ") + std::to_string(i + 1) + " (" + name +
                          ") is not 32 bytes");
    }
    Hash256 h;
    std::memcpy(h.data(), f.item.payload.data(), 32);
    return h;
}

}  // namespace

bytes index_key(uint64_t i) {
    bytes out;
    if (i == 0) {
        out.push_back(0x80);
        return out;
    }
    uint8_t be[8];
    size_t n = 0;
    for (uint64_t v = i; v != 0; v >>= 8) ++n;
    for (size_t k = 0; k < n; ++k) be[k] = static_cast<uint8_t>(i >> (8 * (n - 1 - k)));
    rlp::append_string(out, bytes_view(be, n));
    return out;
}

Result<Hash256> ordered_trie_root(std::span<const bytes_view> items) {
    // The keys in byte order: rlp(1)..rlp(127) are the bytes 0x01..0x7f, below rlp(0) = 0x80,
    // which is below every longer form (0x81.., 0x82.., ...); those keep the order of i.
    StackTrie st;
    const auto add = [&](size_t i) -> Status {
        if (items[i].empty()) {
            return Error{Errc::bad_input, "item " + std::to_string(i + 1) + " is empty"};
        }
        return st.add(index_key(i), items[i]);
    };
    const size_t n = items.size();
    for (size_t i = 1; i < n && i < 0x80; ++i) MPT_RETURN_IF_ERROR(add(i));
    if (n > 0) MPT_RETURN_IF_ERROR(add(0));
    for (size_t i = 0x80; i < n; ++i) MPT_RETURN_IF_ERROR(add(i));
    return st.finish();
}

Result<BlockRoots> block_roots(bytes_view block_rlp) {
    const BlockReader r(block_rlp);
    bytes_view in = block_rlp;
    MPT_TRY(const Piece block, r.next(in, "block"));
    if (!in.empty()) {
        return r.fail(Errc::rlp_trailing_bytes, r.offset(in),
                      std::to_string(in.size()) + " bytes after the block");
    }
    if (!block.item.is_list) return r.fail(Errc::bad_input, 0, "the block is not a list");
    MPT_TRY(const std::vector<Piece> parts, r.items(block, "block item"));
    if (parts.size() < 3) {
        return r.fail(Errc::bad_input, 0,
                      "the block has " + std::to_string(parts.size()) +
                          " items; want [header, transactions, ommers, ...]");
    }
    const char* names[] = {"header", "transactions", "ommers", "withdrawals"};
    for (size_t i = 0; i < parts.size() && i < 4; ++i) {
        if (!parts[i].item.is_list) {
            return r.fail(Errc::bad_input, parts[i].offset,
                          std::string(names[i]) + " is not a list");
        }
    }
    MPT_TRY(const std::vector<Piece> header, r.items(parts[0], "header field"));
    if (header.size() < 15) {
        return r.fail(Errc::bad_input, parts[0].offset,
                      "the header has " + std::to_string(header.size()) + " fields, fewer than 15");
    }
    BlockRoots out;
    MPT_TRY(out.header_transactions_root, hash_field(r, header, 4, "transactionsRoot"));
    if (const Piece& f = header[5]; !f.item.is_list && f.item.payload.size() == 32) {
        Hash256 h;
        std::memcpy(h.data(), f.item.payload.data(), 32);
        out.header_receipts_root = h;
    }
    if (header.size() > 16) {
        MPT_TRY(out.header_withdrawals_root, hash_field(r, header, 16, "withdrawalsRoot"));
    }

    MPT_TRY(const std::vector<Piece> txs, r.items(parts[1], "transaction"));
    std::vector<bytes_view> values;
    values.reserve(txs.size());
    for (size_t i = 0; i < txs.size(); ++i) {
        const Piece& t = txs[i];
        if (t.item.is_list) {
            values.push_back(t.encoding);  // legacy: the list itself
            continue;
        }
        // EIP-2718: type || payload, the type in [0, 0x7f].
        if (t.item.payload.empty() || t.item.payload[0] >= 0x80) {
            return r.fail(Errc::bad_input, t.offset,
                          "transaction " + std::to_string(i + 1) +
                              " is a string but no typed transaction (type byte missing or not "
                              "below 0x80)");
        }
        values.push_back(t.item.payload);
    }
    MPT_TRY(out.transactions_root, ordered_trie_root(values));
    out.transactions = txs.size();

    if (parts.size() > 3) {
        MPT_TRY(const std::vector<Piece> ws, r.items(parts[3], "withdrawal"));
        values.clear();
        for (size_t i = 0; i < ws.size(); ++i) {
            if (!ws[i].item.is_list) {
                return r.fail(Errc::bad_input, ws[i].offset,
                              "withdrawal " + std::to_string(i + 1) + " is not a list");
            }
            values.push_back(ws[i].encoding);
        }
        MPT_TRY(out.withdrawals_root, ordered_trie_root(values));
        out.withdrawals = ws.size();
    }
    return out;
}

Result<HeaderFacts> header_facts(bytes_view header_rlp) {
    const BlockReader r(header_rlp);
    bytes_view in = header_rlp;
    MPT_TRY(const Piece header, r.next(in, "header"));
    if (!in.empty()) {
        return r.fail(Errc::rlp_trailing_bytes, r.offset(in),
                      std::to_string(in.size()) + " bytes after the header");
    }
    if (!header.item.is_list) return r.fail(Errc::bad_input, 0, "the header is not a list");
    MPT_TRY(const std::vector<Piece> fields, r.items(header, "header field"));
    if (fields.size() < 15) {
        return r.fail(Errc::bad_input, 0,
                      "the header has " + std::to_string(fields.size()) + " fields, fewer than 15");
    }
    HeaderFacts out;
    out.hash = keccak256(header_rlp);
    MPT_TRY(out.parent_hash, hash_field(r, fields, 0, "parentHash"));
    MPT_TRY(out.state_root, hash_field(r, fields, 3, "stateRoot"));
    const Piece& n = fields[8];
    const bytes_view digits = n.item.payload;
    if (n.item.is_list || digits.size() > 8 || (!digits.empty() && digits[0] == 0)) {
        return r.fail(Errc::bad_input, n.offset,
                      "header field 9 (number) is not an integer of at most 8 bytes");
    }
    for (const uint8_t b : digits) out.number = out.number << 8 | b;
    return out;
}

}  // namespace mpt
