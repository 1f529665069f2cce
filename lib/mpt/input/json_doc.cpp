#include <cstring>
#include <mpt/core/hex.hpp>
#include <mpt/input/json_doc.hpp>
#include <mpt/input/json_lexer.hpp>

namespace mpt {

Result<JsonDoc> JsonDoc::parse(std::string_view text) {
    MPT_TRY(JsonTree tree, JsonTree::parse_flat(text, "an object"));
    // Valid JSON of another kind is a document of the wrong shape, not a syntax error.
    if (!tree.root().is_object())
        return Error{Errc::bad_input, "the document is not a JSON object"};
    return JsonDoc(std::move(tree));
}

namespace {

std::string field_name(std::string_view name) { return "field \"" + std::string(name) + "\""; }

// The error's detail lacks the field's name, which the caller puts in front.
Result<bytes> decode_hex(std::string_view s) {
    if (s.size() >= 2 && s[0] == '0' && s[1] == 'X') {
        return Error{Errc::bad_hex, "0X prefix: hex strings start with a lowercase 0x"};
    }
    if (s.size() < 2 || s[0] != '0' || s[1] != 'x')
        return Error{Errc::bad_hex, "missing 0x prefix"};
    return from_hex(s);
}

Error in_field(Error e, const std::string& where) {
    e.detail = where + ": " + e.detail;
    return e;
}

}  // namespace

Result<JsonValue> JsonDoc::required(std::string_view name) const {
    const std::optional<JsonValue> v = tree_.root().find(name);
    if (!v) return Error{Errc::bad_input, "missing " + field_name(name)};
    return *v;
}

namespace {

Result<std::vector<bytes>> array_of_hex(const JsonValue& v, std::string_view name) {
    if (!v.is_array()) return Error{Errc::bad_input, field_name(name) + ": not an array"};
    std::vector<bytes> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        const JsonValue item = v[i];
        if (!item.is_string()) {
            return Error{Errc::bad_input, field_name(name) + " item " + std::to_string(i + 1) +
                                              ": not a hex string"};
        }
        auto b = decode_hex(item.text());
        if (!b) {
            return in_field(std::move(b).error(),
                            field_name(name) + " item " + std::to_string(i + 1));
        }
        out.push_back(std::move(*b));
    }
    return out;
}

}  // namespace

bool JsonDoc::has(std::string_view name) const noexcept {
    return tree_.root().find(name).has_value();
}

Result<bytes> JsonDoc::hex(std::string_view name) const {
    MPT_TRY(const JsonValue v, required(name));
    if (!v.is_string()) return Error{Errc::bad_input, field_name(name) + ": not a hex string"};
    auto b = decode_hex(v.text());
    if (!b) return in_field(std::move(b).error(), field_name(name));
    return b;
}

Result<Hash256> JsonDoc::hash(std::string_view name) const {
    MPT_TRY(const bytes b, hex(name));
    if (b.size() != 32) {
        return Error{Errc::bad_hex,
                     field_name(name) + ": expected 32 bytes, got " + std::to_string(b.size())};
    }
    Hash256 h;
    std::memcpy(h.data(), b.data(), 32);
    return h;
}

Result<std::optional<bytes>> JsonDoc::nullable_hex(std::string_view name) const {
    MPT_TRY(const JsonValue v, required(name));
    if (v.is_null()) return std::optional<bytes>{};
    MPT_TRY(bytes b, hex(name));
    return std::optional<bytes>{std::move(b)};
}

Result<std::vector<bytes>> JsonDoc::hex_array(std::string_view name) const {
    MPT_TRY(const JsonValue v, required(name));
    return array_of_hex(v, name);
}

Result<std::optional<std::vector<bytes>>> JsonDoc::optional_hex_array(std::string_view name) const {
    const std::optional<JsonValue> v = tree_.root().find(name);
    if (!v || v->is_null()) return std::optional<std::vector<bytes>>{};
    MPT_TRY(std::vector<bytes> items, array_of_hex(*v, name));
    return std::optional<std::vector<bytes>>{std::move(items)};
}

}  // namespace mpt
