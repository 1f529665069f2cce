// Proof documents: one JSON object whose fields are hex strings ("0x.."), null, or arrays of
// hex strings, as `mpt proof` writes them and eth_getProof answers hold them.
//
// A JsonDoc is a view of a JsonTree (json_tree.hpp) that reads the top-level object's members:
// the text is checked against RFC 8259 in one pass as the tree is built. Members that are
// never asked for may hold any JSON value (their member names are not held to differ in more
// than case). A member given twice takes its last value.
//
// Every error names the field: Errc::bad_json for a syntax error (with line and column),
// Errc::bad_input for a missing field or one of the wrong type, Errc::bad_hex for bad hex.
//
// Thread safety: a value type; const methods may be called from several threads.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/input/json_tree.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpt {

class JsonDoc {
public:
    // The document text must outlive the JsonDoc. A text that is valid JSON but not an object
    // is Errc::bad_input.
    static Result<JsonDoc> parse(std::string_view text);

    // True when the document has a field called name, whatever it holds.
    bool has(std::string_view name) const noexcept;
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
    explicit JsonDoc(JsonTree tree) : tree_(std::move(tree)) {}

    Result<JsonValue> required(std::string_view name) const;

    JsonTree tree_;
};

}  // namespace mpt
