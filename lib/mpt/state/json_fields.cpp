#include <mpt/state/json_fields.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/state/getproof.hpp>

namespace mpt {

bool has_hex_prefix(std::string_view s) noexcept {
    return s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

Error JsonFields::fail(const JsonValue& v, const std::string& field, Errc code,
                       const std::string& why) const {
    return Error{code, "field \"" + prefix_ + field + "\" (" + v.where() + "): " + why};
}

Result<JsonValue> JsonFields::member(const JsonValue& obj, std::string_view name,
                                     const std::string& field) const {
    auto m = obj.find(name);
    if (!m) {
        return Error{Errc::bad_input,
                     "missing field \"" + prefix_ + field + "\" (object at " + obj.where() + ")"};
    }
    return *m;
}

Result<std::string_view> JsonFields::string(const JsonValue& obj, std::string_view name,
                                            const std::string& field) const {
    MPT_TRY(const JsonValue v, member(obj, name, field));
    if (!v.is_string()) return fail(v, field, Errc::bad_input, "not a string");
    return v.text();
}

Result<bytes> JsonFields::data(const JsonValue& v, const std::string& field) const {
    if (!v.is_string()) return fail(v, field, Errc::bad_input, "not a hex string");
    if (!has_hex_prefix(v.text())) {
        return fail(v, field, Errc::bad_hex, "missing 0x prefix: " + quoted(v.text()));
    }
    auto b = from_hex(v.text());
    if (!b) return fail(v, field, Errc::bad_hex, b.error().detail);
    return b;
}

Result<U256> JsonFields::quantity(const JsonValue& obj, std::string_view name,
                                  const std::string& field, size_t max_bytes) const {
    MPT_TRY(const JsonValue v, member(obj, name, field));
    if (!v.is_string()) return fail(v, field, Errc::bad_input, "not a hex quantity string");
    auto q = parse_quantity(v.text(), max_bytes);
    if (!q) return fail(v, field, q.error().code, q.error().detail);
    return q;
}

Result<std::vector<bytes>> JsonFields::nodes(const JsonValue& obj, std::string_view name,
                                             const std::string& field) const {
    MPT_TRY(const JsonValue v, member(obj, name, field));
    if (!v.is_array()) return fail(v, field, Errc::bad_input, "not an array");
    std::vector<bytes> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        MPT_TRY(bytes node, data(v[i], field + "[" + std::to_string(i) + "]"));
        out.push_back(std::move(node));
    }
    return out;
}

}  // namespace mpt
