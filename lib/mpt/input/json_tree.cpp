#include <mpt/input/json_lexer.hpp>
#include <mpt/input/json_tree.hpp>

#include <cstdint>
#include <cstring>
#include <optional>

namespace mpt {

class JsonTreeParser : json_detail::JsonLexer {
public:
    // flat: member names are checked in the top-level object only.
    explicit JsonTreeParser(std::string_view text, bool flat = false)
        : JsonLexer(text), flat_(flat) {
        tree_.text_ = text;
        // Room for a value per 64 bytes of text (a 32-byte hex string takes 69): more grows
        // the vectors, and the part a smaller document leaves unused is never touched. On
        // huge pages: a large document's tree is filled a page fault every 4 KiB otherwise.
        reserve_huge(tree_.nodes_, text.size() / 64 + 16);
        reserve_huge(tree_.kids_, text.size() / 64 + 16);
    }

    Result<JsonTree> parse(std::string_view expected = "a value") {
        if (static_cast<uint64_t>(end_ - begin_) > UINT32_MAX) {
            return Error{Errc::bad_input, "document larger than 4 GiB"};
        }
        skip_ws();
        if (p_ == end_) return fail("empty document; expected " + std::string(expected));
        MPT_RETURN_IF_ERROR(parse_value(0, {}));
        skip_ws();
        if (p_ != end_) return fail("unexpected data after the document");
        if (twins_) return std::move(*twins_);
        return std::move(tree_);
    }

    // Values one after another, as the items of an array at the root (index 0).
    Result<JsonTree> parse_sequence() {
        if (static_cast<uint64_t>(end_ - begin_) > UINT32_MAX) {
            return Error{Errc::bad_input, "document larger than 4 GiB"};
        }
        skip_ws();
        if (p_ == end_) return fail("empty document; expected a value");
        JsonTree::Node root;
        root.kind = JsonKind::array;
        tree_.nodes_.push_back(root);
        while (p_ != end_) {
            MPT_TRY(const uint32_t item, parse_value(1, {}));
            pending_.push_back(item);
            skip_ws();
        }
        if (twins_) return std::move(*twins_);
        JsonTree::Node& n = tree_.nodes_[0];
        n.first = static_cast<uint32_t>(tree_.kids_.size());
        n.count = static_cast<uint32_t>(pending_.size());
        n.end = static_cast<uint32_t>(end_ - begin_);
        tree_.kids_.insert(tree_.kids_.end(), pending_.begin(), pending_.end());
        pending_.clear();
        return std::move(tree_);
    }

private:
    // Parses the value at p_ into a new node and returns its index. The node is appended
    // before its children, which are parsed into pending_ and moved into kids_ as one run
    // when the container ends, so that a container's children are contiguous.
    Result<uint32_t> parse_value(int depth, std::string_view name) {
        MPT_TRY(const uint32_t index, parse_value_at(depth, name));
        tree_.nodes_[index].end = static_cast<uint32_t>(p_ - begin_);
        return index;
    }

    Result<uint32_t> parse_value_at(int depth, std::string_view name) {
        if (tree_.nodes_.size() == UINT32_MAX) return fail("too many values");
        const auto index = static_cast<uint32_t>(tree_.nodes_.size());
        JsonTree::Node node;
        node.offset = static_cast<uint32_t>(p_ - begin_);
        node.name = name;
        tree_.nodes_.push_back(node);
        switch (peek()) {
            case '"': {
                MPT_TRY(const std::string_view s, parse_string());
                tree_.nodes_[index].kind = JsonKind::string;
                tree_.nodes_[index].text = s;
                return index;
            }
            case '[':
            case '{':
                MPT_RETURN_IF_ERROR(parse_container(index, depth));
                return index;
            case 't':
                return literal(index, "true", JsonKind::boolean);
            case 'f':
                return literal(index, "false", JsonKind::boolean);
            case 'n':
                return literal(index, "null", JsonKind::null);
            default: {
                const char* start = p_;
                MPT_RETURN_IF_ERROR(skip_number());
                tree_.nodes_[index].kind = JsonKind::number;
                tree_.nodes_[index].text = std::string_view(start, static_cast<size_t>(p_ - start));
                return index;
            }
        }
    }

    Status parse_container(uint32_t index, int depth) {
        if (depth >= JsonTree::kMaxDepth) {
            return fail("nesting deeper than " + std::to_string(JsonTree::kMaxDepth));
        }
        const bool object = peek() == '{';
        const char close = object ? '}' : ']';
        tree_.nodes_[index].kind = object ? JsonKind::object : JsonKind::array;
        const size_t mark = pending_.size();
        const char* at = p_;
        if (!open_is_empty(close)) {
            while (true) {
                skip_ws();
                std::string_view name;
                if (object) {
                    if (peek() != '"') return fail("expected a string key");
                    MPT_TRY(name, parse_string());
                    skip_ws();
                    if (peek() != ':') return fail("expected ':'");
                    ++p_;
                    skip_ws();
                }
                MPT_TRY(const uint32_t child, parse_value(depth + 1, name));
                pending_.push_back(child);
                MPT_TRY(const bool more, next_item(close));
                if (!more) break;
            }
        }
        if (object && !twins_ && pending_.size() - mark > 1 && (!flat_ || depth == 0)) {
            names_.clear();
            for (size_t i = mark; i < pending_.size(); ++i) {
                names_.push_back(tree_.nodes_[pending_[i]].name);
            }
            if (Status s = json_detail::check_case_twins(names_); !s) {
                twins_ =
                    Error{Errc::bad_input, "the object at " + where(at) + ": " + s.error().detail};
            }
        }
        JsonTree::Node& n = tree_.nodes_[index];
        n.first = static_cast<uint32_t>(tree_.kids_.size());
        n.count = static_cast<uint32_t>(pending_.size() - mark);
        tree_.kids_.insert(tree_.kids_.end(), pending_.begin() + static_cast<ptrdiff_t>(mark),
                           pending_.end());
        pending_.resize(mark);
        return {};
    }

    Result<uint32_t> literal(uint32_t index, std::string_view word, JsonKind kind) {
        if (static_cast<size_t>(end_ - p_) < word.size() ||
            std::memcmp(p_, word.data(), word.size()) != 0) {
            return fail("invalid literal");
        }
        tree_.nodes_[index].kind = kind;
        tree_.nodes_[index].text = std::string_view(p_, word.size());
        p_ += word.size();
        return index;
    }

    // REQUIRES: p_ at the opening quote.
    Result<std::string_view> parse_string() {
        MPT_TRY(const std::string_view s, string_content());
        if (s.data() != scratch_.data()) return s;
        return std::string_view(tree_.decoded_.emplace_back(scratch_));  // kept
    }

    bool flat_;
    JsonTree tree_;
    std::vector<uint32_t> pending_;        // children of the open containers, innermost last
    std::vector<std::string_view> names_;  // an object's member names, for check_case_twins
    // The first object whose names differ only in case: the document's error once the rest
    // of it is read, so that a text that is no JSON at all is a syntax error whatever it holds.
    std::optional<Error> twins_;
};

Result<JsonTree> JsonTree::parse(std::string_view text) {
    return JsonTreeParser(json_detail::without_bom(text)).parse();
}

Result<JsonTree> JsonTree::parse_flat(std::string_view text, std::string_view expected) {
    return JsonTreeParser(json_detail::without_bom(text), true).parse(expected);
}

Result<JsonTree> JsonTree::parse_sequence(std::string_view text) {
    return JsonTreeParser(json_detail::without_bom(text)).parse_sequence();
}

std::string quoted(std::string_view text) {
    constexpr size_t kQuoteLimit = 80;
    std::string out(1, '"');
    out.append(text.substr(0, kQuoteLimit));
    if (text.size() > kQuoteLimit) out.append("...");
    out.push_back('"');
    return out;
}

Result<std::optional<JsonValue>> json_rpc_result(const JsonValue& v) {
    if (!v.is_object()) return std::optional<JsonValue>();
    if (auto e = v.find("error"); e && !e->is_null()) {
        std::string why;
        if (auto m = e->find("message"); m && m->is_string()) why = ": " + quoted(m->text());
        return Error{Errc::bad_input,
                     "the JSON-RPC response carries an error (" + e->where() + ")" + why};
    }
    if (auto r = v.find("result")) return std::optional<JsonValue>(*r);
    return std::optional<JsonValue>();
}

std::string_view JsonValue::source() const noexcept {
    const JsonTree::Node& n = tree_->nodes_[index_];
    return tree_->text_.substr(n.offset, n.end - n.offset);
}

std::string_view JsonValue::name(size_t i) const noexcept {
    return tree_->nodes_[(*this)[i].index_].name;
}

std::optional<JsonValue> JsonValue::find(std::string_view name) const noexcept {
    const JsonTree::Node& n = tree_->nodes_[index_];
    if (n.kind != JsonKind::object) return std::nullopt;
    for (size_t i = n.count; i-- > 0;) {
        const uint32_t child = tree_->kids_[n.first + i];
        if (tree_->nodes_[child].name == name) return JsonValue(tree_, child);
    }
    return std::nullopt;
}

std::string JsonValue::where() const {
    const std::string_view text = tree_->text_;
    const size_t at = tree_->nodes_[index_].offset;
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace mpt
