// Proof documents: one JSON object whose fields are hex strings ("0x.."), null, or arrays of
// hex strings, as `mpt proof` writes them and eth_getProof answers hold them.
//
// JsonDoc::parse checks the whole text against RFC 8259 in one pass without building a tree:
// it keeps each member's string, or each string item of a member's array, as a view into the
// text (a string with escapes is decoded into storage the JsonDoc owns). Members that are
// never asked for may hold any JSON value. A member given twice takes its last value.
//
// Every error names the field: Errc::bad_json for a syntax error (with line and column),
// Errc::bad_input for a missing field or one of the wrong type, Errc::bad_hex for bad hex.
//
// Thread safety: a value type; const methods may be called from several threads.
#pragma once

#include <deque>
#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mpt {

class JsonDoc {
public:
    // The document text must outlive the JsonDoc. A text that is valid JSON but not an object
    // is Errc::bad_input.
    static Result<JsonDoc> parse(std::string_view text);

    // True when the document has a field called name, whatever it holds.
    bool has(std::string_view name) const noexcept { return find(name) != nullptr; }
    // A required field holding a hex string.
    Result<bytes> hex(std::string_view name) const;
    // A required field holding a 32-byte hex string.
    Result<Hash256> hash(std::string_view name) const;
    // A required field holding a hex string or null (nullopt).
    Result<std::optional<bytes>> nullable_hex(std::string_view name) const;
    // A required field holding an array of hex strings.
    Result<std::vector<bytes>> hex_array(std::string_view name) const;
    // Like hex_array, but a missing or null field is nullopt.
    Result<std::optional<std::vector<bytes>>> optional_hex_array(std::string_view name) const;

private:
    friend class JsonDocParser;
    enum class Kind : uint8_t { string, null, array, other };
    struct Value {
        Kind kind = Kind::other;
        std::string_view text;  // a string's decoded content
        uint32_t first = 0;     // an array's items: items_[first, first + count)
        uint32_t count = 0;
    };
    struct Member {
        std::string_view name;
        Value value;
    };

    const Value* find(std::string_view name) const noexcept;
    Result<const Value*> required(std::string_view name) const;
    Result<std::vector<bytes>> array_of_hex(const Value& v, std::string_view name) const;

    std::vector<Member> members_;
    std::vector<Value> items_;         // the top-level arrays' items
    std::deque<std::string> decoded_;  // strings that held escapes; elements never move
};

}  // namespace mpt
