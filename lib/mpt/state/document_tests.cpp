// The reader of ethereum/tests BlockchainTests files (document.hpp: parse_blockchain_tests):
// each test's "pre" and "postState" allocs, its genesis header's and its last block's
// stateRoot, and each block's RLP beside the transactions and withdrawals roots of its header.

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
                MPT_TRY(const HeaderRoots h, header_roots());
                if (!h.state_root) {
                    return in_test(t.name, member, fail("no \"stateRoot\"")).error();
                }
                t.genesis_state_root = *h.state_root;
                genesis = true;
            } else if (member == "blocks") {
                MPT_RETURN_IF_ERROR(
                    in_test(t.name, member, parse_blocks(last_block_root, t.blocks)));
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

// blocks: [{"blockHeader": {"stateRoot": ...}, "rlp": ..., ...}, ...]; the last header's
// stateRoot, and the blocks that have both an rlp and a header.
Status StateParser::parse_blocks(std::optional<Hash256>& last,
                                 std::vector<BlockchainBlock>& blocks) {
    if (peek() != '[') return fail("\"blocks\" is not an array");
    if (open_is_empty(']')) return {};
    for (size_t index = 0;; ++index) {
        skip_ws();
        if (peek() != '{') return fail("a block is not an object");
        std::optional<HeaderRoots> header;
        std::optional<std::string> rlp;
        if (!open_is_empty('}')) {
            while (true) {
                skip_ws();
                if (peek() != '"') return fail("expected a string key");
                MPT_TRY(const std::string_view name, string_view_value());
                const bool is_header = name == "blockHeader";
                const bool is_rlp = name == "rlp";
                MPT_RETURN_IF_ERROR(colon());
                if (is_header) {
                    MPT_TRY(header, header_roots());
                    if (!header->state_root) return fail("a blockHeader without \"stateRoot\"");
                    last = *header->state_root;
                } else if (is_rlp && peek() == '"') {
                    MPT_TRY(const std::string_view text, string_view_value());
                    rlp = std::string(text);
                } else {
                    MPT_RETURN_IF_ERROR(skip_value(3));
                }
                MPT_TRY(const bool more, next_item('}'));
                if (!more) break;
            }
        }
        if (header && rlp) {
            blocks.push_back(BlockchainBlock{index, std::move(*rlp), header->transactions_trie,
                                             header->withdrawals_root});
        }
        MPT_TRY(const bool more, next_item(']'));
        if (!more) return {};
    }
}

// The roots of a block header object.
Result<StateParser::HeaderRoots> StateParser::header_roots() {
    if (peek() != '{') return fail("a block header is not an object");
    HeaderRoots roots;
    if (open_is_empty('}')) return roots;
    while (true) {
        skip_ws();
        if (peek() != '"') return fail("expected a string key");
        MPT_TRY(const std::string_view name, string_view_value());
        std::optional<Hash256>* field = nullptr;
        const char* label = nullptr;
        if (name == "stateRoot") {
            field = &roots.state_root;
            label = "stateRoot";
        } else if (name == "transactionsTrie") {
            field = &roots.transactions_trie;
            label = "transactionsTrie";
        } else if (name == "withdrawalsRoot") {
            field = &roots.withdrawals_root;
            label = "withdrawalsRoot";
        }
        MPT_RETURN_IF_ERROR(colon());
        if (field != nullptr) {
            const char* at = p_;
            if (peek() != '"') return fail("\"" + std::string(label) + "\" is not a string");
            MPT_TRY(const std::string_view s, string_view_value());
            Hash256 h;
            if (const char* why = parse_hash(s, h)) {
                return Error{Errc::bad_hex, where(at) + ": " + label + ": " + why};
            }
            *field = h;
        } else {
            MPT_RETURN_IF_ERROR(skip_value(4));
        }
        MPT_TRY(const bool more, next_item('}'));
        if (!more) return roots;
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
