// What the state document readers share: the field parsers of more than one file, the
// per-account bookkeeping, and the StateParser class whose members are defined in
// document.cpp (shape detection, whole-document and line-by-line readers, the hash pass),
// document_fields.cpp (field values, account objects) and document_tests.cpp
// (BlockchainTests files). Private to lib/mpt/state/: not part of the public API; use
// state/document.hpp.
//
// Thread safety: a StateParser is used by one thread (its hash pass starts its own).
#pragma once

#include <mpt/core/hex.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/state/document.hpp>

#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mpt::document_detail {

inline bool has_0x(std::string_view s) noexcept {
    return s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

// An address by common.UnprefixedAddress: 0x optional (either case), exactly 40 hex digits.
inline const char* parse_address(std::string_view s, Address& out) {
    if (has_0x(s)) s.remove_prefix(2);
    if (s.size() != 40) return "an address is 40 hex digits";
    if (!decode_hex_pairs(s, out.data())) return "not a hex digit";
    return nullptr;
}

// A hash: 0x optional, exactly 64 hex digits (geth writes a dump's root without the prefix).
inline const char* parse_hash(std::string_view s, Hash256& out) {
    if (has_0x(s)) s.remove_prefix(2);
    if (s.size() != 64) return "a hash is 64 hex digits";
    if (!decode_hex_pairs(s, out.data())) return "not a hex digit";
    return nullptr;
}

// The shape of a state document of one object, from what its top level held: one rule for
// the reader in memory (document.cpp) and the streamed one (document_stream.cpp). A genesis
// has "alloc", a geth dump "accounts" or "root", an alloc only addresses; an address beside
// "alloc", "accounts" or "root", or a member of none of these kinds, is refused.
struct TopKinds {
    bool alloc = false;
    bool accounts_or_root = false;
    bool address = false;
    bool other = false;
};
// Why an object is no state document; the error is placed at the first address member, or
// for other_member at the first member of no known kind.
enum class ShapeFault : uint8_t { none, address_beside_alloc, address_beside_dump, other_member };
ShapeFault object_shape(const TopKinds& top, StateShape& shape);
// The error of a fault at place (a "line L, column C"); other_name names the other member.
Error shape_error(ShapeFault fault, const std::string& place, std::string_view other_name);

enum class Rules : uint8_t { alloc, dump };

// name in lower case (ASCII) in buf, or empty when it is longer than buf: no field name is.
inline std::string_view lowered(std::string_view name, char (&buf)[16]) noexcept {
    if (name.size() > sizeof buf) return {};
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        buf[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return {buf, name.size()};
}

// What the hash pass checks of an account beside its StateAccount.
struct Pending {
    std::string_view label;              // the account's name in errors
    const char* code_hash_at = nullptr;  // where a dump's codeHash is (nullptr: not given)
    const char* key_at = nullptr;        // where a dump's key is
    Hash256 code_hash{};
    Hash256 key{};
};

struct Collected {
    std::vector<StateAccount> accounts;
    std::vector<Pending> pending;
};

// True when text, where a document starts, is the first line of mpt's own dump by lines
// (mpt dump --accounts): an account object that begins {"address":"0x<40 hex>","nonce": or
// {"key":"0x<64 hex>","nonce":, byte for byte as mpt writes it. A document so begun is read
// by lines from its first.
bool starts_mpt_dump(std::string_view text) noexcept;

class StateParser : json_detail::JsonLexer {
public:
    explicit StateParser(std::string_view text) : JsonLexer(text), counted_to_(text.data()) {}

    Result<StateDoc> parse(unsigned threads);
    Result<std::optional<std::vector<BlockchainTest>>> parse_tests();

private:
    // What the top-level object held (nullptr: not seen).
    struct Top {
        const char* at = nullptr;
        const char* alloc_at = nullptr;
        const char* accounts_at = nullptr;
        const char* root_at = nullptr;
        const char* address_at = nullptr;       // the first address member
        const char* other_at = nullptr;         // the first member of none of these kinds
        const char* shape_member_at = nullptr;  // "alloc" or "accounts"
        std::string other_name;
        std::string root;
    };

    friend class StateStreamParser;

    // document.cpp
    Status parse_top(Collected& c, Top& top);
    Status parse_members(Collected& c, const char* not_object,
                         Status (StateParser::*member)(Collected&));
    Status parse_alloc(Collected& c);
    Status parse_dump_accounts(Collected& c);
    Status parse_lines(Collected& c, StateDoc& doc);
    // One member of an alloc (p_ at its name), of a dump's "accounts", and one account
    // object of a dump by lines (first: the first of them, which decides the shape).
    Status alloc_member(Collected& c);
    Status dump_member(Collected& c);
    // A member's name (p_ before it; name_at set to its place), kept as the account's label,
    // and the error of a name that is no address or hash.
    Result<std::string_view> member_name(const char*& name_at);
    Error name_error(const char* name_at, std::string_view label, const char* why) const;
    Status line_account(Collected& c, StateDoc& doc, bool first);

    Status finish(Collected& c, StateDoc& doc, unsigned threads);
    // address_hash: keccak256 of a's address when the caller has it (hashed in a batch).
    std::string hash_account(StateAccount& a, const Pending& pd,
                             const Hash256* address_hash = nullptr) const;
    static void merge_repeated_accounts(std::vector<StateAccount>& accounts);

    // document_fields.cpp
    Status parse_account(Collected& c, Rules rules, std::string_view label, const char* at,
                         const Address* addr);
    // A field only a dump's account has (its storage root, code hash, key or address), at
    // value_at; false when field is none of them.
    Result<bool> parse_dump_field(std::string_view field, std::string_view label,
                                  const char* value_at, StateAccount& a, Pending& pd,
                                  const Address* addr);
    Status parse_storage(StateAccount& a, std::string_view label, bool dump);

    // document_tests.cpp
    Result<bool> parse_test(BlockchainTest& t);
    // The roots a block header object gives (each nullopt when it has none).
    struct HeaderRoots {
        std::optional<Hash256> state_root;
        std::optional<Hash256> transactions_trie;
        std::optional<Hash256> withdrawals_root;
    };
    Status parse_blocks(std::optional<Hash256>& last, std::vector<BlockchainBlock>& blocks);
    Result<HeaderRoots> header_roots();
    static Status in_test(const std::string& test, std::string_view member, Status s);

    Status colon() {
        skip_ws();
        if (peek() != ':') return fail("expected ':'");
        ++p_;
        skip_ws();
        return {};
    }

    // REQUIRES: p_ at a string. Its content: a view into the text when it has no escapes,
    // else into scratch_ (valid until the next string).
    Result<std::string_view> string_view_value() { return string_content(); }

    Result<std::string_view> string_field(std::string_view label, std::string_view field) {
        if (peek() != '"') return field_error(p_, label, field, "not a string");
        return string_view_value();
    }

    // A quantity as a string, or as a JSON number (math.HexOrDecimal* take both).
    Result<std::string_view> quantity_text(std::string_view label, std::string_view field) {
        if (peek() == '"') return string_view_value();
        const char* start = p_;
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
            MPT_RETURN_IF_ERROR(skip_number());
            return std::string_view(start, static_cast<size_t>(p_ - start));
        }
        return field_error(p_, label, field, "not a string or a number");
    }

    Error field_error(const char* at, std::string_view label, std::string_view field,
                      const std::string& why) const {
        std::string d = where(at) + ": ";
        if (!label.empty()) d += "account " + std::string(label) + ": ";
        d += "field \"" + std::string(field) + "\": " + why;
        return {Errc::bad_input, d};
    }

    // A label that outlives the parse of the next string.
    std::string_view keep_label(std::string_view s) {
        if (s.data() >= begin_ && s.data() + s.size() <= end_) return s;
        return labels_.emplace_back(s);
    }
    std::string_view keep_label(std::string s) { return labels_.emplace_back(std::move(s)); }

    // The line of at, counted on from where the last call counted to (accounts come in
    // order): each byte is looked at once, however long a line (a whole document on one).
    size_t line_of(const char* at) {
        if (at < counted_to_) {
            counted_to_ = begin_;
            line_ = base_line_;
        }
        for (const char* q;
             (q = static_cast<const char*>(std::memchr(
                  counted_to_, '\n', static_cast<size_t>(at - counted_to_)))) != nullptr;) {
            ++line_;
            counted_to_ = q + 1;
        }
        counted_to_ = at;
        return line_;
    }

    // For a piece of a document (document_stream.cpp): parses text from now on, whose first
    // byte is at line `line` and `column` bytes into it in the whole document.
    void reset(std::string_view text, size_t line, size_t column) {
        p_ = begin_ = text.data();
        end_ = text.data() + text.size();
        base_line_ = line;
        base_column_ = column;
        counted_to_ = begin_;
        line_ = line;
        labels_.clear();
    }

    const char* counted_to_;  // line_ counts the newlines before this
    size_t line_ = 1;
    std::deque<std::string> labels_;
};

}  // namespace mpt::document_detail
