// The reader of ethereum/tests BlockchainTests files (document.hpp: parse_blockchain_tests):
// each test's "pre" and "postState" allocs, its genesis header's and its last block's
// stateRoot.

#include <mpt/state/document_parse.hpp>

namespace mpt::document_detail {

Result<std::optional<std::vector<BlockchainTest>>> StateParser::parse_tests() {
    using Out = std::optional<std::vector<BlockchainTest>>;
    skip_ws();
    if (peek() != '{') return Out();
    std::vector<BlockchainTest> tests;
    if (!open_is_empty('}')) {
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            const char* name_at = p_;
            MPT_TRY(const std::string_view name_view, string_view_value());
            std::string name(name_view);
            MPT_RETURN_IF_ERROR(colon());
            BlockchainTest t;
            t.name = name;
            t.line = line_of(name_at);
            MPT_TRY(const bool shaped, parse_test(t));
            if (!shaped) {
                if (tests.empty()) return Out();
                return Error{Errc::bad_input, where(name_at) + ": test " + name +
                                                  ": not a blockchain test (needs \"pre\", "
                                                  "\"genesisBlockHeader\" and \"blocks\")"};
            }
            tests.push_back(std::move(t));
            MPT_TRY(const bool more, next_item('}'));
            if (!more) break;
        }
    }
    MPT_RETURN_IF_ERROR(expect_end());
    if (tests.empty()) return Out();
    return Out(std::move(tests));
}

// A test of a BlockchainTests file; false when it is not of that shape.
Result<bool> StateParser::parse_test(BlockchainTest& t) {
    skip_ws();
    if (peek() != '{') {
        MPT_RETURN_IF_ERROR(skip_value(1));
        return false;
    }
    bool pre = false, genesis = false, blocks = false;
    std::optional<Hash256> last_block_root;
    Collected pre_c, post_c;
    bool post = false;
    if (!open_is_empty('}')) {
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            MPT_TRY(const std::string_view name, string_view_value());
            const std::string member(name);
            MPT_RETURN_IF_ERROR(colon());
            if (member == "pre" || member == "postState") {
                Collected& c = member == "pre" ? pre_c : post_c;
                c.accounts.clear();
                c.pending.clear();
                (member == "pre" ? pre : post) = true;
                MPT_RETURN_IF_ERROR(in_test(t.name, member, parse_alloc(c)));
            } else if (member == "genesisBlockHeader") {
                MPT_TRY(std::optional<Hash256> root, header_state_root());
                if (!root) return in_test(t.name, member, fail("no \"stateRoot\"")).error();
                t.genesis_state_root = *root;
                genesis = true;
            } else if (member == "blocks") {
                MPT_RETURN_IF_ERROR(in_test(t.name, member, parse_blocks(last_block_root)));
                blocks = true;
            } else {
                MPT_RETURN_IF_ERROR(skip_value(2));
            }
            MPT_TRY(const bool more, next_item('}'));
            if (!more) break;
        }
    }
    if (!pre || !genesis || !blocks) return false;
    t.pre.shape = StateShape::alloc;
    MPT_RETURN_IF_ERROR(in_test(t.name, "pre", finish(pre_c, t.pre, 1)));
    if (post) {
        t.post.emplace();
        t.post->shape = StateShape::alloc;
        MPT_RETURN_IF_ERROR(in_test(t.name, "postState", finish(post_c, *t.post, 1)));
    }
    t.post_state_root = last_block_root ? *last_block_root : t.genesis_state_root;
    return true;
}

// blocks: [{"blockHeader": {"stateRoot": ...}, ...}, ...]; the last header's stateRoot.
Status StateParser::parse_blocks(std::optional<Hash256>& last) {
    if (peek() != '[') return fail("\"blocks\" is not an array");
    if (open_is_empty(']')) return {};
    while (true) {
        skip_ws();
        if (peek() != '{') return fail("a block is not an object");
        if (!open_is_empty('}')) {
            while (true) {
                skip_ws();
                if (peek() != '"') return fail("expected a string key");
                MPT_TRY(const std::string_view name, string_view_value());
                const bool header = name == "blockHeader";
                MPT_RETURN_IF_ERROR(colon());
                if (header) {
                    MPT_TRY(std::optional<Hash256> root, header_state_root());
                    if (!root) return fail("a blockHeader without \"stateRoot\"");
                    last = *root;
                } else {
                    MPT_RETURN_IF_ERROR(skip_value(3));
                }
                MPT_TRY(const bool more, next_item('}'));
                if (!more) break;
            }
        }
        MPT_TRY(const bool more, next_item(']'));
        if (!more) return {};
    }
}

// A block header object's stateRoot (nullopt when it has none).
Result<std::optional<Hash256>> StateParser::header_state_root() {
    if (peek() != '{') return fail("a block header is not an object");
    std::optional<Hash256> root;
    if (open_is_empty('}')) return root;
    while (true) {
        skip_ws();
        if (peek() != '"') return fail("expected a string key");
        MPT_TRY(const std::string_view name, string_view_value());
        const bool state_root = name == "stateRoot";
        MPT_RETURN_IF_ERROR(colon());
        if (state_root) {
            const char* at = p_;
            if (peek() != '"') return fail("\"stateRoot\" is not a string");
            MPT_TRY(const std::string_view s, string_view_value());
            Hash256 h;
            if (const char* why = parse_hash(s, h)) {
                return Error{Errc::bad_hex, where(at) + ": stateRoot: " + why};
            }
            root = h;
        } else {
            MPT_RETURN_IF_ERROR(skip_value(4));
        }
        MPT_TRY(const bool more, next_item('}'));
        if (!more) return root;
    }
}

Status StateParser::in_test(const std::string& test, std::string_view member, Status s) {
    if (s.ok()) return s;
    Error e = std::move(s).error();
    // "line L, column C: ..." stays first.
    const size_t colon_at = e.detail.find(": ");
    const std::string place = "test " + test + ": " + std::string(member);
    if (e.detail.starts_with("line ") && colon_at != std::string::npos) {
        e.detail = e.detail.substr(0, colon_at) + ": " + place + e.detail.substr(colon_at);
    } else {
        e.detail = place + ": " + e.detail;
    }
    return e;
}

}  // namespace mpt::document_detail

namespace mpt {

Result<std::optional<std::vector<BlockchainTest>>> parse_blockchain_tests(std::string_view text) {
    return document_detail::StateParser(text).parse_tests();
}

}  // namespace mpt
