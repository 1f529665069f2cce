#include <cstring>
#include <mpt/core/hex.hpp>
#include <mpt/input/json_doc.hpp>
#include <mpt/input/json_lexer.hpp>

namespace mpt {

class JsonDocParser : json_detail::JsonLexer {
public:
    explicit JsonDocParser(std::string_view text) : JsonLexer(text) {
        // Room for an array item per 64 bytes of text (a 32-byte hex string takes 69): more
        // grows the vector, and the part a smaller document leaves unused is never touched.
        doc_.items_.reserve(text.size() / 64 + 16);
    }

    Result<JsonDoc> parse() {
        skip_ws();
        if (p_ == end_) return fail("empty document; expected an object");
        if (*p_ != '{') {
            // Valid JSON of another kind is a document of the wrong shape, not a syntax error.
            MPT_RETURN_IF_ERROR(skip_value(0));
            MPT_RETURN_IF_ERROR(expect_end());
            return Error{Errc::bad_input, "the document is not a JSON object"};
        }
        if (!open_is_empty('}')) {
            while (true) {
                skip_ws();
                if (peek() != '"') return fail("expected a string key");
                JsonDoc::Member m;
                MPT_TRY(m.name, parse_string());
                skip_ws();
                if (peek() != ':') return fail("expected ':'");
                ++p_;
                skip_ws();
                MPT_TRY(m.value, parse_member_value());
                doc_.members_.push_back(m);
                MPT_TRY(const bool more, next_item('}'));
                if (!more) break;
            }
        }
        MPT_RETURN_IF_ERROR(expect_end());
        std::vector<std::string_view> names;
        names.reserve(doc_.members_.size());
        for (const JsonDoc::Member& m : doc_.members_) names.push_back(m.name);
        MPT_RETURN_IF_ERROR(json_detail::check_case_twins(names));
        return std::move(doc_);
    }

private:
    Result<JsonDoc::Value> parse_member_value() {
        JsonDoc::Value v;
        if (peek() == '"') {
            v.kind = JsonDoc::Kind::string;
            MPT_TRY(v.text, parse_string());
        } else if (peek() == '[') {
            v.kind = JsonDoc::Kind::array;
            v.first = static_cast<uint32_t>(doc_.items_.size());
            MPT_RETURN_IF_ERROR(parse_array_items());
            v.count = static_cast<uint32_t>(doc_.items_.size() - v.first);
        } else if (peek() == 'n') {
            v.kind = JsonDoc::Kind::null;
            MPT_RETURN_IF_ERROR(skip_value(1));
        } else {
            MPT_RETURN_IF_ERROR(skip_value(1));
        }
        return v;
    }

    Status parse_array_items() {
        if (open_is_empty(']')) return {};
        while (true) {
            skip_ws();
            JsonDoc::Value item;
            if (peek() == '"') {
                item.kind = JsonDoc::Kind::string;
                MPT_TRY(item.text, parse_string());
            } else {
                MPT_RETURN_IF_ERROR(skip_value(2));
            }
            if (doc_.items_.size() == UINT32_MAX) return fail("too many array items");
            doc_.items_.push_back(item);
            MPT_TRY(const bool more, next_item(']'));
            if (!more) return {};
        }
    }

    // REQUIRES: p_ at the opening quote. The string's content: a view into the text when it
    // has no escapes, else into a decoded copy the document keeps.
    Result<std::string_view> parse_string() {
        const char* s = p_ + 1;
        const char* q = json_detail::scan_plain(s, end_);
        if (q != end_ && *q == '"') {
            p_ = q + 1;
            return std::string_view(s, static_cast<size_t>(q - s));
        }
        MPT_RETURN_IF_ERROR(lex_string());
        return std::string_view(doc_.decoded_.emplace_back(scratch_));
    }

    JsonDoc doc_;
};

Result<JsonDoc> JsonDoc::parse(std::string_view text) {
    return JsonDocParser(json_detail::without_bom(text)).parse();
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

const JsonDoc::Value* JsonDoc::find(std::string_view name) const noexcept {
    for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
        if (it->name == name) return &it->value;
    }
    return nullptr;
}

Result<const JsonDoc::Value*> JsonDoc::required(std::string_view name) const {
    const Value* v = find(name);
    if (v == nullptr) return Error{Errc::bad_input, "missing " + field_name(name)};
    return v;
}

Result<bytes> JsonDoc::hex(std::string_view name) const {
    MPT_TRY(const Value* v, required(name));
    if (v->kind != Kind::string)
        return Error{Errc::bad_input, field_name(name) + ": not a hex string"};
    auto b = decode_hex(v->text);
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
    MPT_TRY(const Value* v, required(name));
    if (v->kind == Kind::null) return std::optional<bytes>{};
    MPT_TRY(bytes b, hex(name));
    return std::optional<bytes>{std::move(b)};
}

Result<std::vector<bytes>> JsonDoc::array_of_hex(const Value& v, std::string_view name) const {
    if (v.kind != Kind::array) return Error{Errc::bad_input, field_name(name) + ": not an array"};
    std::vector<bytes> out;
    out.reserve(v.count);
    for (uint32_t i = 0; i < v.count; ++i) {
        const Value& item = items_[v.first + i];
        if (item.kind != Kind::string) {
            return Error{Errc::bad_input, field_name(name) + " item " + std::to_string(i + 1) +
                                              ": not a hex string"};
        }
        auto b = decode_hex(item.text);
        if (!b) {
            return in_field(std::move(b).error(),
                            field_name(name) + " item " + std::to_string(i + 1));
        }
        out.push_back(std::move(*b));
    }
    return out;
}

Result<std::vector<bytes>> JsonDoc::hex_array(std::string_view name) const {
    MPT_TRY(const Value* v, required(name));
    return array_of_hex(*v, name);
}

Result<std::optional<std::vector<bytes>>> JsonDoc::optional_hex_array(std::string_view name) const {
    const Value* v = find(name);
    if (v == nullptr || v->kind == Kind::null) return std::optional<std::vector<bytes>>{};
    MPT_TRY(std::vector<bytes> items, array_of_hex(*v, name));
    return std::optional<std::vector<bytes>>{std::move(items)};
}

}  // namespace mpt
