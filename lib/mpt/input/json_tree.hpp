// A whole JSON document as a tree of views, for the nested documents that the flat readers
// (json_doc.hpp, kv_input.hpp) do not take: eth_getProof answers ({"result": {...,
// "storageProof": [{...}]}}), lists of encoded items, RLP written as nested arrays.
//
// JsonTree::parse checks the text against RFC 8259 in one pass and keeps one node per value:
// a string's content is a view into the text (a string with escapes is decoded into storage
// the tree owns), a number or literal is its text. Containers nest at most kMaxDepth deep, so
// a hostile document cannot exhaust the stack. Each node knows where it starts, for errors
// that name a line and column.
//
// Thread safety: a value type; const methods may be called from several threads.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mpt {

class JsonTree;

enum class JsonKind : uint8_t { null, boolean, number, string, array, object };

// One value of a JsonTree: a cheap handle, valid as long as the tree (and its text).
class JsonValue {
public:
    JsonKind kind() const noexcept;
    bool is_string() const noexcept { return kind() == JsonKind::string; }
    bool is_array() const noexcept { return kind() == JsonKind::array; }
    bool is_object() const noexcept { return kind() == JsonKind::object; }
    bool is_null() const noexcept { return kind() == JsonKind::null; }

    // A string's decoded content; a number's or literal's text.
    std::string_view text() const noexcept;
    // The items of an array, the members of an object; 0 for anything else.
    size_t size() const noexcept;
    // REQUIRES: an array or object and i < size(). Item i (an object's member value i).
    JsonValue operator[](size_t i) const noexcept;
    // REQUIRES: an object and i < size(). The name of member i.
    std::string_view name(size_t i) const noexcept;
    // The member called name of an object (the last one when repeated), or nullopt (also
    // when this is not an object).
    std::optional<JsonValue> find(std::string_view name) const noexcept;

    // "line L, column C" of the value's first character (columns count bytes from 1).
    std::string where() const;
    // The value's text as written, from its first character to its last.
    std::string_view source() const noexcept;

private:
    friend class JsonTree;
    JsonValue(const JsonTree* tree, uint32_t index) : tree_(tree), index_(index) {}
    const JsonTree* tree_;
    uint32_t index_;
};

// A value of a document shown in an error: text in double quotes, at most 80 bytes of it and
// then "..." when there is more.
std::string quoted(std::string_view text);

// The answer of a JSON-RPC response {"jsonrpc", "id", "result"}: its "result"; Errc::bad_input
// naming the place and the node's message when it carries an "error" instead; nullopt when v
// is no response (an object with neither member, or not an object), to be read as it is.
Result<std::optional<JsonValue>> json_rpc_result(const JsonValue& v);

class JsonTree {
public:
    static constexpr int kMaxDepth = 256;

    // The text must outlive the tree. Any JSON value is a document. Errc::bad_json, naming
    // the line and column, for a syntax error, invalid UTF-8 or nesting past kMaxDepth; else
    // Errc::bad_input for the first object whose member names differ only in case
    // (json_detail::check_case_twins), once the whole text is read.
    static Result<JsonTree> parse(std::string_view text);
    // As parse, for a reader of one kind of document that reads no deeper than the members of
    // the top-level object (json_doc.hpp): an empty text is "empty document; expected
    // <expected>", and only the top-level object's member names are held to differ in more
    // than case.
    static Result<JsonTree> parse_flat(std::string_view text, std::string_view expected);
    // Values one after another, separated by white space or by nothing (JSON lines, or
    // several documents in one stream): the root is an array of them, each item's where()
    // and source() in the text. At least one value.
    static Result<JsonTree> parse_sequence(std::string_view text);

    JsonValue root() const noexcept { return {this, 0}; }

private:
    friend class JsonValue;
    friend class JsonTreeParser;
    struct Node {
        JsonKind kind = JsonKind::null;
        uint32_t first = 0;  // a container's children: kids_[first, first + count)
        uint32_t count = 0;
        uint32_t offset = 0;    // where the value starts in the text
        uint32_t end = 0;       // and where it ends
        std::string_view text;  // see JsonValue::text()
        std::string_view name;  // the member name, for a member of an object
    };

    std::string_view text_;
    std::vector<Node> nodes_;  // nodes_[0] is the root
    std::vector<uint32_t> kids_;
    std::deque<std::string> decoded_;  // strings that held escapes; elements never move
};

// The accessors a reader calls for every value, inline.
inline JsonKind JsonValue::kind() const noexcept { return tree_->nodes_[index_].kind; }

inline std::string_view JsonValue::text() const noexcept { return tree_->nodes_[index_].text; }

inline size_t JsonValue::size() const noexcept {
    const JsonTree::Node& n = tree_->nodes_[index_];
    return n.kind == JsonKind::array || n.kind == JsonKind::object ? n.count : 0;
}

inline JsonValue JsonValue::operator[](size_t i) const noexcept {
    const JsonTree::Node& n = tree_->nodes_[index_];
    MPT_ASSERT(i < n.count);
    return {tree_, tree_->kids_[n.first + i]};
}

}  // namespace mpt
