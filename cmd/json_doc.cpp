#include "json_doc.hpp"

#include <mpt/hex.hpp>

namespace mpt::cli {
namespace {

std::string field_name(const char* name) { return std::string("field \"") + name + "\""; }

Result<bytes> hex_value(const nlohmann::json& v, const std::string& where) {
    if (!v.is_string()) return Error{Errc::bad_input, where + ": not a hex string"};
    const std::string& s = v.get_ref<const std::string&>();
    if (s.size() < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
        return Error{Errc::bad_hex, where + ": missing 0x prefix"};
    }
    auto b = from_hex(s);
    if (!b) return Error{Errc::bad_hex, where + ": " + b.error().detail};
    return b;
}

Result<const nlohmann::json*> required(const nlohmann::json& doc, const char* name) {
    const auto it = doc.find(name);
    if (it == doc.end()) return Error{Errc::bad_input, "missing " + field_name(name)};
    return &*it;
}

Result<std::vector<bytes>> hex_array(const nlohmann::json& v, const char* name) {
    if (!v.is_array()) return Error{Errc::bad_input, field_name(name) + ": not an array"};
    std::vector<bytes> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        MPT_TRY(bytes b, hex_value(v[i], field_name(name) + " item " + std::to_string(i)));
        out.push_back(std::move(b));
    }
    return out;
}

}  // namespace

Result<nlohmann::json> parse_json_object(std::string_view text) {
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        return Error{Errc::bad_json, "at byte " + std::to_string(e.byte)};
    }
    if (!doc.is_object()) return Error{Errc::bad_input, "the document is not a JSON object"};
    return doc;
}

Result<bytes> hex_field(const nlohmann::json& doc, const char* name) {
    MPT_TRY(const nlohmann::json* v, required(doc, name));
    return hex_value(*v, field_name(name));
}

Result<Hash256> hash_field(const nlohmann::json& doc, const char* name) {
    MPT_TRY(const bytes b, hex_field(doc, name));
    if (b.size() != 32) {
        return Error{Errc::bad_hex,
                     field_name(name) + ": expected 32 bytes, got " + std::to_string(b.size())};
    }
    Hash256 h;
    std::copy(b.begin(), b.end(), h.begin());
    return h;
}

Result<std::optional<bytes>> nullable_hex_field(const nlohmann::json& doc, const char* name) {
    MPT_TRY(const nlohmann::json* v, required(doc, name));
    if (v->is_null()) return std::optional<bytes>{};
    MPT_TRY(bytes b, hex_value(*v, field_name(name)));
    return std::optional<bytes>{std::move(b)};
}

Result<std::vector<bytes>> hex_array_field(const nlohmann::json& doc, const char* name) {
    MPT_TRY(const nlohmann::json* v, required(doc, name));
    return hex_array(*v, name);
}

Result<std::optional<std::vector<bytes>>> optional_hex_array_field(const nlohmann::json& doc,
                                                                   const char* name) {
    const auto it = doc.find(name);
    if (it == doc.end() || it->is_null()) return std::optional<std::vector<bytes>>{};
    MPT_TRY(std::vector<bytes> v, hex_array(*it, name));
    return std::optional<std::vector<bytes>>{std::move(v)};
}

}  // namespace mpt::cli
