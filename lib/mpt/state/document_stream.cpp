// The streaming reader of state documents (document_stream.hpp). The text is read into a
// buffer and cut into units the whole-document parser can take as they are: an account
// member (its name and object), a top-level member, an account object of a dump by lines, and
// the single bytes between them. Each unit is found by a scan of strings and brackets, then
// parsed by the StateParser functions read_state_document uses, on a view of just that unit
// placed at its line and column, so that both the accounts and the errors come out the same.
// A unit the scan cannot close within the buffer takes more reading; at the end of the text
// it is handed over as it is, and the parser reports what is wrong with it where the whole
// document's parse would.
//
// What parse() decides over the whole document is decided here at the end in the same order:
// the shape, the checks of the top-level members, the dump's root, and the first hash error
// of an account (a codeHash or key that does not match), which a parse error anywhere after
// it would have come first.

#include <mpt/input/json_lexer.hpp>
#include <mpt/state/document_parse.hpp>
#include <mpt/state/document_stream.hpp>

#include <algorithm>
#include <cstring>

namespace mpt::document_detail {

using json_detail::is_ws;

class StateStreamParser {
public:
    StateStreamParser(TextStream& in, StateAccountSink& sink)
        : in_(in), buf_(in.buf()), sink_(sink), parser_(std::string_view()) {}

    Result<StateStreamResult> parse();

private:
    static constexpr size_t kNeedMore = SIZE_MAX;

    // The position of buffer offset at in the document: "line L, column C".
    std::string where(size_t at) {
        advance_mark(at);
        return "line " + std::to_string(mark_line_) + ", column " + std::to_string(mark_col_ + 1);
    }
    void advance_mark(size_t at) {
        for (size_t i = mark_; i < at;) {
            const void* q = std::memchr(buf_.data() + i, '\n', at - i);
            if (q == nullptr) {
                mark_col_ += at - i;
                break;
            }
            const size_t nl = static_cast<size_t>(static_cast<const char*>(q) - buf_.data());
            ++mark_line_;
            mark_col_ = 0;
            i = nl + 1;
        }
        mark_ = at;
    }
    // Points the parser at buffer bytes [from, to).
    void piece(size_t from, size_t to) {
        advance_mark(from);
        parser_.reset(std::string_view(buf_.data() + from, to - from), mark_line_, mark_col_);
    }
    size_t parsed_to(size_t from) const noexcept {
        return from + static_cast<size_t>(parser_.p_ - parser_.begin_);
    }
    // Drops the bytes before pos_ once they are many (the places stay counted).
    void compact() {
        if (pos_ < in_.piece_bytes()) return;
        advance_mark(pos_);
        in_.drop(pos_);
        mark_ -= pos_;
        pos_ = 0;
    }

    // Past white space from pos_, reading as needed; false at the end of the text.
    Result<bool> skip_ws() {
        while (true) {
            while (pos_ < buf_.size() && is_ws(buf_[pos_])) ++pos_;
            if (pos_ < buf_.size()) return true;
            compact();
            if (in_.eof()) return false;
            MPT_RETURN_IF_ERROR(in_.fill(buf_.size() + 1));
        }
    }

    // Scans of the buffer from at: just past what they look for, past the byte that cannot
    // begin it (for the parser to report), or kNeedMore when the buffer ends first.
    size_t scan_ws(size_t at) const noexcept {
        while (at < buf_.size() && is_ws(buf_[at])) ++at;
        return at < buf_.size() ? at : kNeedMore;
    }
    size_t scan_string(size_t at) const noexcept {  // REQUIRES: buf_[at] == '"'
        for (size_t i = at + 1; i < buf_.size(); ++i) {
            if (buf_[i] == '\\') {
                ++i;
            } else if (buf_[i] == '"') {
                return i + 1;
            }
        }
        return kNeedMore;
    }
    size_t scan_value(size_t at) const noexcept {
        at = scan_ws(at);
        if (at == kNeedMore) return kNeedMore;
        const char c = buf_[at];
        if (c == '"') return scan_string(at);
        if (c == '{' || c == '[') {
            int depth = 0;
            for (size_t i = at; i < buf_.size(); ++i) {
                const char d = buf_[i];
                if (d == '"') {
                    i = scan_string(i);
                    if (i == kNeedMore) return kNeedMore;
                    --i;
                } else if (d == '{' || d == '[') {
                    // Deeper than the parser follows: it reports that from what is here.
                    if (++depth > StateParser::kMaxDepth + 8) return i + 1;
                } else if (d == '}' || d == ']') {
                    if (--depth == 0) return i + 1;
                }
            }
            return kNeedMore;
        }
        // A number or a literal, up to the byte after it.
        for (size_t i = at; i < buf_.size(); ++i) {
            const char d = buf_[i];
            if (is_ws(d) || d == ',' || d == '}' || d == ']' || d == ':') return i + 1;
        }
        return kNeedMore;
    }
    // A member: its name, ':' and (with value) its value, else the value's first byte.
    size_t scan_member(size_t at, bool value) const noexcept {
        at = scan_ws(at);
        if (at == kNeedMore) return kNeedMore;
        if (buf_[at] != '"') return at + 1;
        at = scan_string(at);
        if (at == kNeedMore) return kNeedMore;
        at = scan_ws(at);
        if (at == kNeedMore) return kNeedMore;
        if (buf_[at] != ':') return at + 1;
        at = scan_ws(at + 1);
        if (at == kNeedMore) return kNeedMore;
        return value ? scan_value(at) : at + 1;
    }

    // Reads until scan(pos_) closes, and parses the unit with parse, the parser pointed at it:
    // up to its end (the buffer's end at the end of the text), with a few bytes more where the
    // text has them: a \u escape cut short by what the scan took for the string's closing quote
    // is read on by the parser, as in the whole text.
    template <typename Scan, typename Parse>
    Status unit(const Scan& scan, const Parse& parse) {
        compact();
        while (true) {
            const size_t end = scan(pos_);
            if (end != kNeedMore) {
                constexpr size_t kLookahead = 4;
                if (buf_.size() < end + kLookahead) MPT_RETURN_IF_ERROR(in_.fill(end + kLookahead));
                piece(pos_, std::min(end + kLookahead, buf_.size()));
                return parse();
            }
            if (in_.eof()) {
                piece(pos_, buf_.size());
                return parse();
            }
            const size_t have = buf_.size() - pos_;
            if (have >= in_.max_entry_bytes()) return too_large(parse);
            MPT_RETURN_IF_ERROR(
                in_.fill(pos_ + std::min(in_.max_entry_bytes(), std::max(have, size_t{4096}) * 2)));
        }
    }

    // No unit closes within what the memory budget holds. What is wrong in the held text
    // comes first, as the whole document's parse reports it (a brace too many in an account
    // leaves it open to the end); an error in its last few bytes may be the cut's (a literal,
    // an escape or a character cut short) and is not taken. Else the budget is the error.
    template <typename Parse>
    Error too_large(const Parse& parse) {
        constexpr size_t kCutSlack = 8;
        const size_t have = buf_.size() - pos_;
        piece(pos_, buf_.size());
        if (Status s = parse(); !s.ok() && parsed_to(pos_) + kCutSlack <= buf_.size()) {
            return s.error();
        }
        return file_error(Errc::input_too_large, in_.path(),
                          where(pos_) + ": no account ends within " + std::to_string(have) +
                              " bytes, the most the memory budget holds at once (--memory)");
    }

    // After a member of an object: a ',' (true) or its '}' (false).
    Result<bool> next_item() {
        MPT_TRY(const bool more, skip_ws());
        const size_t end = more ? pos_ + 1 : pos_;
        piece(pos_, end);
        MPT_TRY(const bool another, parser_.next_item('}'));
        pos_ = parsed_to(pos_);
        return another;
    }

    // Hands over the account the parser has just read.
    Status emit() {
        StateAccount& a = c_.accounts.back();
        std::string e = parser_.hash_account(a, c_.pending.back());
        if (!e.empty() && hash_error_.empty()) hash_error_ = std::move(e);
        MPT_RETURN_IF_ERROR(sink_.account(a, instances_++));
        c_.accounts.clear();
        c_.pending.clear();
        return {};
    }

    // A trie file at the document's start (after a byte order mark): bad_json naming it, as
    // the whole document's reader does.
    Status not_a_trie_file();
    // The members of an alloc, or of a dump's "accounts" (dump), from pos_ at its '{'.
    Status accounts_object(bool dump);
    Status top_member();
    Status lines();

    TextStream& in_;
    const TextStream::Buffer& buf_;
    StateAccountSink& sink_;
    // out with the accounts counted, or the first account's hash error.
    Result<StateStreamResult> finished(StateStreamResult out) const;

    StateParser parser_;
    Collected c_;
    size_t pos_ = 0;
    // The document place of buffer offset mark_.
    size_t mark_ = 0;
    size_t mark_line_ = 1;
    size_t mark_col_ = 0;
    uint64_t instances_ = 0;
    uint64_t first_live_ = 0;
    std::string hash_error_;  // the first account's hash error since first_live_
    // What the top-level object held, as places ("" for none).
    struct Top {
        std::string at, alloc_at, accounts_at, root_at, address_at, other_at, other_name;
        std::string root;
        bool shape_member = false;
    } top_;
    StateDoc lines_doc_;  // the shape a dump by lines decides
};

Status StateStreamParser::not_a_trie_file() {
    MPT_RETURN_IF_ERROR(in_.fill(pos_ + kSqliteHeader.size()));
    if (is_sqlite_database(in_.text().substr(pos_))) {
        return Error{Errc::bad_json, std::string(kSqliteNotADocument)};
    }
    return {};
}

Status StateStreamParser::accounts_object(bool dump) {
    if (pos_ == buf_.size() || buf_[pos_] != '{') {
        piece(pos_, std::min(pos_ + 1, buf_.size()));
        return parser_.fail(dump ? "\"accounts\" is an object of accounts"
                                 : "an alloc is an object of accounts");
    }
    ++pos_;
    MPT_TRY(const bool any, skip_ws());
    if (any && buf_[pos_] == '}') {
        ++pos_;
        return {};
    }
    while (true) {
        const auto parse = [&] {
            return dump ? parser_.dump_member(c_) : parser_.alloc_member(c_);
        };
        MPT_RETURN_IF_ERROR(unit([&](size_t at) { return scan_member(at, true); }, parse));
        pos_ = parsed_to(pos_);
        MPT_RETURN_IF_ERROR(emit());
        MPT_TRY(const bool more, next_item());
        if (!more) return {};
    }
}

// One member of the top-level object, as StateParser::parse_top reads it.
Status StateStreamParser::top_member() {
    // Its name and ':'.
    const char* name_at = nullptr;
    std::string_view name_view;
    const auto head = [&]() -> Status {
        parser_.skip_ws();
        if (parser_.peek() != '"') return parser_.fail("expected a string key");
        name_at = parser_.p_;
        MPT_TRY(name_view, parser_.string_view_value());
        return parser_.colon();
    };
    MPT_RETURN_IF_ERROR(unit([&](size_t at) { return scan_member(at, false); }, head));
    char lower[16];
    const std::string_view member = lowered(name_view, lower);
    if (member == "alloc" || member == "accounts") {
        const bool alloc = member == "alloc";
        if (!(alloc ? top_.accounts_at : top_.alloc_at).empty() || !top_.address_at.empty()) {
            return parser_.fail_at(name_at, "\"alloc\" beside \"accounts\" or addresses");
        }
        (alloc ? top_.alloc_at : top_.accounts_at) = parser_.where(name_at);
        top_.shape_member = true;
        // A repeated member keeps its last value: what came before is not in the state.
        first_live_ = instances_;
        hash_error_.clear();
        pos_ = parsed_to(pos_);
        return accounts_object(!alloc);
    }
    Address addr;
    const bool address = top_.alloc_at.empty() && top_.accounts_at.empty() &&
                         parse_address(name_view, addr) == nullptr;
    const bool root = member == "root";
    // The whole member, read again from its name.
    const auto whole = [&]() -> Status {
        parser_.skip_ws();
        name_at = parser_.p_;
        MPT_TRY(const std::string_view name, parser_.string_view_value());
        if (root) {
            MPT_RETURN_IF_ERROR(parser_.colon());
            if (parser_.peek() != '"')
                return parser_.field_error(parser_.p_, "", "root", "not a string");
            top_.root_at = parser_.where(parser_.p_);
            MPT_TRY(const std::string_view value, parser_.string_view_value());
            top_.root = value;
            return {};
        }
        if (address) {
            if (top_.address_at.empty()) top_.address_at = parser_.where(name_at);
            const std::string_view label = parser_.keep_label(name);
            MPT_RETURN_IF_ERROR(parser_.colon());
            return parser_.parse_account(c_, Rules::alloc, label, name_at, &addr);
        }
        if (top_.other_at.empty()) {
            top_.other_at = parser_.where(name_at);
            top_.other_name = name;
        }
        MPT_RETURN_IF_ERROR(parser_.colon());
        return parser_.skip_value(1);
    };
    MPT_RETURN_IF_ERROR(unit([&](size_t at) { return scan_member(at, true); }, whole));
    pos_ = parsed_to(pos_);
    return address ? emit() : Status{};
}

// The accounts after a {"root": ...} line, one object each (StateParser::parse_lines).
Status StateStreamParser::lines() {
    bool first = true;
    while (true) {
        MPT_TRY(const bool any, skip_ws());
        if (!any) return {};
        const auto parse = [&] { return parser_.line_account(c_, lines_doc_, first); };
        MPT_RETURN_IF_ERROR(unit([&](size_t at) { return scan_value(at); }, parse));
        first = false;
        pos_ = parsed_to(pos_);
        MPT_RETURN_IF_ERROR(emit());
    }
}

Result<StateStreamResult> StateStreamParser::parse() {
    StateStreamResult out;
    MPT_RETURN_IF_ERROR(in_.fill(3));
    if (in_.text().starts_with(json_detail::kByteOrderMark)) {
        pos_ = mark_ = json_detail::kByteOrderMark.size();
    }
    MPT_RETURN_IF_ERROR(not_a_trie_file());
    MPT_TRY(bool any, skip_ws());
    if (!any) {
        piece(pos_, pos_);
        return parser_.fail("empty document; expected an object");
    }
    if (buf_[pos_] != '{') {
        const auto parse = [&] { return parser_.skip_value(0); };
        MPT_RETURN_IF_ERROR(unit([&](size_t at) { return scan_value(at); }, parse));
        pos_ = parsed_to(pos_);
        MPT_TRY(any, skip_ws());
        if (any) {
            piece(pos_, pos_ + 1);
            return parser_.fail("unexpected data after the document");
        }
        return Error{Errc::bad_input, "a state document is a JSON object"};
    }
    MPT_RETURN_IF_ERROR(in_.fill(pos_ + 96));
    if (starts_mpt_dump(in_.text().substr(pos_))) {
        MPT_RETURN_IF_ERROR(lines());
        out.shape = StateShape::mpt_dump;
        return finished(out);
    }
    top_.at = where(pos_);
    ++pos_;
    MPT_TRY(any, skip_ws());
    if (any && buf_[pos_] == '}') {
        ++pos_;
    } else {
        while (true) {
            MPT_RETURN_IF_ERROR(top_member());
            MPT_TRY(const bool more, next_item());
            if (!more) break;
        }
    }
    MPT_TRY(any, skip_ws());
    if (any && buf_[pos_] == '{') {
        if (top_.root_at.empty() || top_.shape_member || !top_.address_at.empty()) {
            return Error{Errc::bad_json, top_.at +
                                             ": several JSON objects: the first line of a dump "
                                             "by lines is {\"root\": ...} alone"};
        }
        MPT_RETURN_IF_ERROR(lines());
        out.shape = lines_doc_.shape;
    } else {
        if (any) {
            piece(pos_, pos_ + 1);
            return parser_.fail("unexpected data after the document");
        }
        const ShapeFault fault = object_shape(
            {!top_.alloc_at.empty(), !top_.accounts_at.empty() || !top_.root_at.empty(),
             !top_.address_at.empty(), !top_.other_at.empty()},
            out.shape);
        if (fault != ShapeFault::none) {
            return shape_error(fault,
                               fault == ShapeFault::other_member ? top_.other_at : top_.address_at,
                               top_.other_name);
        }
    }
    if (out.shape == StateShape::geth_dump || out.shape == StateShape::geth_dump_lines ||
        out.shape == StateShape::reth_dump) {
        if (!top_.root_at.empty()) {
            Hash256 root;
            if (const char* why = parse_hash(top_.root, root)) {
                return Error{Errc::bad_input, top_.root_at + ": field \"root\": " + why};
            }
            out.claimed_root = root;
        }
    }
    return finished(out);
}

Result<StateStreamResult> StateStreamParser::finished(StateStreamResult out) const {
    if (!hash_error_.empty()) return Error{Errc::bad_input, hash_error_};
    out.accounts = instances_;
    out.first_live = first_live_;
    return out;
}

}  // namespace mpt::document_detail

namespace mpt {

Result<StateStreamResult> stream_state_document(TextStream& stream, StateAccountSink& sink) {
    auto r = document_detail::StateStreamParser(stream, sink).parse();
    if (!r) {
        Error e = std::move(r).error();
        if (e.file.empty()) e.file = stream.path();
        return e;
    }
    return r;
}

}  // namespace mpt
