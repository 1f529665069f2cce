#include <mpt/state/document.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/trie/task_pool.hpp>

#include <algorithm>
#include <cstring>
#include <deque>
#include <numeric>

namespace mpt {
namespace {

bool has_0x(std::string_view s) noexcept {
    return s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

// Hex digits into out (exactly out.size() * 2 of them). False on a non-hex digit.
bool decode_digits(std::string_view digits, uint8_t* out) noexcept {
    for (size_t i = 0; i < digits.size(); i += 2) {
        const uint8_t hi = kHexDigitValue[static_cast<uint8_t>(digits[i])];
        const uint8_t lo = kHexDigitValue[static_cast<uint8_t>(digits[i + 1])];
        if ((hi | lo) > 0x0f) return false;
        out[i / 2] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return true;
}

// A quantity by geth's math.ParseBig256 / ParseUint64: "" is zero; "0x"/"0X" then hex digits
// (at least one; leading zeros allowed; with a base given, big.Int.SetString and
// strconv.ParseUint take no underscores and no second prefix), else decimal digits; at most
// 256 or 64 bits. A sign is refused: ParseUint64 takes none, and though big.Int.SetString
// takes one, a negative balance cannot enter a state (geth's uint256.MustFromBig panics on
// it). max_bytes: 32 or 8; the value fills out[0, max_bytes) big-endian. Returns what is
// wrong, or nullptr.
const char* parse_quantity(std::string_view s, size_t max_bytes, uint8_t* out) {
    std::memset(out, 0, max_bytes);
    if (s.empty()) return nullptr;
    if (s[0] == '-' || s[0] == '+') return "a quantity takes no sign";
    if (has_0x(s)) {
        s.remove_prefix(2);
        if (s.empty()) return "no hex digits after 0x";
        for (char c : s) {
            if (kHexDigitValue[static_cast<uint8_t>(c)] > 0x0f) return "not a hex digit";
        }
        while (!s.empty() && s[0] == '0') s.remove_prefix(1);
        if (s.size() > max_bytes * 2) {
            return max_bytes == 32 ? "more than 256 bits" : "more than 64 bits";
        }
        // Right-aligned: digit j from the end goes to nibble j from the end.
        for (size_t j = 0; j < s.size(); ++j) {
            const uint8_t d = kHexDigitValue[static_cast<uint8_t>(s[s.size() - 1 - j])];
            out[max_bytes - 1 - j / 2] |= static_cast<uint8_t>(j % 2 == 0 ? d : d << 4);
        }
        return nullptr;
    }
    for (char c : s) {
        if (c < '0' || c > '9') return "not a decimal or 0x-prefixed hex integer";
    }
    // Up to 19 digits at a time: limbs = limbs * 10^k + chunk, over four 64-bit limbs (least
    // significant first); a carry out of the top limb, or bits beyond max_bytes, overflow.
    uint64_t limbs[4] = {0, 0, 0, 0};
    while (!s.empty()) {
        const size_t k = std::min<size_t>(s.size(), 19);
        uint64_t chunk = 0, scale = 1;
        for (size_t i = 0; i < k; ++i) {
            chunk = chunk * 10 + static_cast<uint64_t>(s[i] - '0');
            scale *= 10;
        }
        s.remove_prefix(k);
        unsigned __int128 carry = chunk;
        for (uint64_t& limb : limbs) {
            const unsigned __int128 v = static_cast<unsigned __int128>(limb) * scale + carry;
            limb = static_cast<uint64_t>(v);
            carry = v >> 64;
        }
        if (carry != 0 || (max_bytes == 8 && (limbs[1] | limbs[2] | limbs[3]) != 0)) {
            return max_bytes == 32 ? "more than 256 bits" : "more than 64 bits";
        }
    }
    for (size_t i = 0; i < max_bytes; ++i) {
        out[max_bytes - 1 - i] = static_cast<uint8_t>(limbs[i / 8] >> (8 * (i % 8)));
    }
    return nullptr;
}

// A storage key or value by geth's storageJSON rule (core/types/account.go): a lowercase
// "0x" prefix is dropped if present (bytes.TrimPrefix), then at most 64 hex digits of even
// length (encoding/hex refuses odd lengths), left-padded to 32 bytes; empty is zero.
const char* parse_storage_word(std::string_view s, U256& out) {
    if (s.starts_with("0x")) s.remove_prefix(2);
    if (s.size() > 64) return "more than 64 hex digits";
    if (s.size() % 2 != 0) return "odd number of hex digits";
    out.fill(0);
    if (!decode_digits(s, out.data() + 32 - s.size() / 2)) return "not a hex digit";
    return nullptr;
}

// An address by common.UnprefixedAddress: 0x optional (either case), exactly 40 hex digits.
const char* parse_address(std::string_view s, Address& out) {
    if (has_0x(s)) s.remove_prefix(2);
    if (s.size() != 40) return "an address is 40 hex digits";
    if (!decode_digits(s, out.data())) return "not a hex digit";
    return nullptr;
}

// A hash: 0x optional, exactly 64 hex digits (geth writes a dump's root without the prefix).
const char* parse_hash(std::string_view s, Hash256& out) {
    if (has_0x(s)) s.remove_prefix(2);
    if (s.size() != 64) return "a hash is 64 hex digits";
    if (!decode_digits(s, out.data())) return "not a hex digit";
    return nullptr;
}

// Bytes by hexutil.Bytes: the 0x prefix required, even length; "0x" is empty, and so is ""
// (hexutil's checkText allows the empty string).
const char* parse_hex_bytes(std::string_view s, bytes& out) {
    if (s.empty()) {
        out.clear();
        return nullptr;
    }
    if (!has_0x(s)) return "hex without the 0x prefix";
    s.remove_prefix(2);
    if (s.size() % 2 != 0) return "odd number of hex digits";
    out.resize(s.size() / 2);
    if (!decode_digits(s, out.data())) return "not a hex digit";
    return nullptr;
}

enum class Rules : uint8_t { alloc, dump };

// name in lower case (ASCII) in buf, or empty when it is longer than buf: no field name is.
std::string_view lowered(std::string_view name, char (&buf)[16]) noexcept {
    if (name.size() > sizeof buf) return {};
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        buf[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return {buf, name.size()};
}

// What the hash pass checks of an account beside its StateAccount.
struct Pending {
    std::string_view label;              // the account's name in errors
    const char* code_hash_at = nullptr;  // where a dump's codeHash is (nullptr: not given)
    const char* key_at = nullptr;        // where a dump's key is
    Hash256 code_hash{};
    Hash256 key{};
};

struct Collected {
    std::vector<StateAccount> accounts;
    std::vector<Pending> pending;
};

class StateParser : json_detail::JsonLexer {
public:
    explicit StateParser(std::string_view text) : JsonLexer(text), line_at_(text.data()) {}

    Result<StateDoc> parse(unsigned threads) {
        skip_ws();
        if (p_ == end_) return fail("empty document; expected an object");
        if (peek() != '{') {
            MPT_RETURN_IF_ERROR(skip_value(0));
            MPT_RETURN_IF_ERROR(expect_end());
            return Error{Errc::bad_input, "a state document is a JSON object"};
        }
        Collected c;
        Top top;
        MPT_RETURN_IF_ERROR(parse_top(c, top));
        skip_ws();
        StateDoc doc;
        if (p_ != end_ && peek() == '{') {
            // One object a line: the first carries only the root.
            if (!top.root_at || top.shape_member_at || top.address_at) {
                return fail_at(top.at,
                               "several JSON objects: the first line of a dump by lines is "
                               "{\"root\": ...} alone");
            }
            MPT_RETURN_IF_ERROR(parse_lines(c, doc));
        } else {
            MPT_RETURN_IF_ERROR(expect_end());
            if (top.alloc_at) {
                if (top.address_at) return fail_at(top.address_at, "an address beside \"alloc\"");
                doc.shape = StateShape::genesis;
            } else if (top.accounts_at || top.root_at) {
                if (top.address_at) {
                    return fail_at(top.address_at, "an address beside \"accounts\" or \"root\"");
                }
                doc.shape = StateShape::geth_dump;
            } else if (top.other_at) {
                return Error{Errc::bad_input,
                             where(top.other_at) + ": member \"" + top.other_name +
                                 "\" is not an address (expected a genesis with \"alloc\", an "
                                 "alloc of addresses, or a dump with \"accounts\")"};
            } else {
                doc.shape = StateShape::alloc;
            }
        }
        if (doc.shape == StateShape::geth_dump || doc.shape == StateShape::geth_dump_lines ||
            doc.shape == StateShape::reth_dump) {
            if (top.root_at) {
                Hash256 root;
                if (const char* why = parse_hash(top.root, root)) {
                    return field_error(top.root_at, "", "root", why);
                }
                doc.claimed_root = root;
            }
        }
        MPT_RETURN_IF_ERROR(finish(c, doc, threads));
        return doc;
    }

    Result<std::optional<std::vector<BlockchainTest>>> parse_tests() {
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

private:
    // What the top-level object held (nullptr: not seen).
    struct Top {
        const char* at = nullptr;
        const char* alloc_at = nullptr;
        const char* accounts_at = nullptr;
        const char* root_at = nullptr;
        const char* address_at = nullptr;       // the first address member
        const char* other_at = nullptr;         // the first member of none of these kinds
        const char* shape_member_at = nullptr;  // "alloc" or "accounts"
        std::string other_name;
        std::string root;
    };

    Status parse_top(Collected& c, Top& top) {
        top.at = p_;
        if (open_is_empty('}')) return {};
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            const char* name_at = p_;
            MPT_TRY(const std::string_view name_view, string_view_value());
            Address addr;
            char lower[16];
            const std::string_view member = lowered(name_view, lower);
            if (member == "alloc" || member == "accounts") {
                const bool alloc = member == "alloc";
                MPT_RETURN_IF_ERROR(colon());
                if ((alloc ? top.accounts_at : top.alloc_at) || top.address_at) {
                    return fail_at(name_at, "\"alloc\" beside \"accounts\" or addresses");
                }
                (alloc ? top.alloc_at : top.accounts_at) = name_at;
                top.shape_member_at = name_at;
                // A repeated member keeps its last value.
                c.accounts.clear();
                c.pending.clear();
                MPT_RETURN_IF_ERROR(alloc ? parse_alloc(c) : parse_dump_accounts(c));
            } else if (member == "root") {
                MPT_RETURN_IF_ERROR(colon());
                if (peek() != '"') return field_error(p_, "", "root", "not a string");
                top.root_at = p_;
                MPT_TRY(const std::string_view root, string_view_value());
                top.root = root;
            } else if (!top.alloc_at && !top.accounts_at &&
                       parse_address(name_view, addr) == nullptr) {
                if (!top.address_at) top.address_at = name_at;
                const std::string_view label = keep_label(name_view);
                MPT_RETURN_IF_ERROR(colon());
                MPT_RETURN_IF_ERROR(parse_account(c, Rules::alloc, label, name_at, &addr));
            } else {
                if (!top.other_at) {
                    top.other_at = name_at;
                    top.other_name = name_view;
                }
                MPT_RETURN_IF_ERROR(colon());
                MPT_RETURN_IF_ERROR(skip_value(1));
            }
            MPT_TRY(const bool more, next_item('}'));
            if (!more) return {};
        }
    }

    // An alloc object: {address: account}.
    Status parse_alloc(Collected& c) {
        if (peek() != '{') return fail("an alloc is an object of accounts");
        if (open_is_empty('}')) return {};
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            const char* name_at = p_;
            MPT_TRY(const std::string_view name_view, string_view_value());
            const std::string_view label = keep_label(name_view);
            Address addr;
            if (const char* why = parse_address(label, addr)) {
                return Error{Errc::bad_hex,
                             where(name_at) + ": account " + std::string(label) + ": " + why};
            }
            MPT_RETURN_IF_ERROR(colon());
            MPT_RETURN_IF_ERROR(parse_account(c, Rules::alloc, label, name_at, &addr));
            MPT_TRY(const bool more, next_item('}'));
            if (!more) return {};
        }
    }

    // geth's dump accounts: {address or "pre(0x<hash>)": account} (core/state/dump.go keys
    // an account without an address preimage by its hash).
    Status parse_dump_accounts(Collected& c) {
        if (peek() != '{') return fail("\"accounts\" is an object of accounts");
        if (open_is_empty('}')) return {};
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            const char* name_at = p_;
            MPT_TRY(const std::string_view name_view, string_view_value());
            const std::string_view label = keep_label(name_view);
            Address addr;
            const bool by_hash = label.starts_with("pre(") && label.ends_with(")");
            if (!by_hash) {
                if (const char* why = parse_address(label, addr)) {
                    return Error{Errc::bad_hex,
                                 where(name_at) + ": account " + std::string(label) + ": " + why};
                }
            }
            Hash256 hash;
            if (by_hash) {
                if (const char* why = parse_hash(label.substr(4, label.size() - 5), hash)) {
                    return Error{Errc::bad_hex,
                                 where(name_at) + ": account " + std::string(label) + ": " + why};
                }
            }
            MPT_RETURN_IF_ERROR(colon());
            MPT_RETURN_IF_ERROR(
                parse_account(c, Rules::dump, label, name_at, by_hash ? nullptr : &addr));
            if (by_hash) {
                Pending& pd = c.pending.back();
                if (pd.key_at && pd.key != hash) {
                    return field_error(pd.key_at, label, "key",
                                       "differs from the hash the account is named by");
                }
                pd.key = hash;
                if (!pd.key_at) pd.key_at = name_at;
            }
            MPT_TRY(const bool more, next_item('}'));
            if (!more) return {};
        }
    }

    // The accounts after a {"root": ...} line, one object each.
    Status parse_lines(Collected& c, StateDoc& doc) {
        bool first = true;
        while (true) {
            skip_ws();
            if (p_ == end_) return {};
            if (peek() != '{') return fail("expected an account object");
            const char* at = p_;
            const std::string_view label = keep_label("on line " + std::to_string(line_of(at)));
            MPT_RETURN_IF_ERROR(parse_account(c, Rules::dump, label, at, nullptr));
            const StateAccount& a = c.accounts.back();
            const Pending& pd = c.pending.back();
            if (first) {
                // geth's iterative dump writes the account's own "root" and "codeHash" and its
                // "key"; reth's reader takes a genesis account with an "address".
                doc.shape = (a.claimed_storage_root || pd.code_hash_at || pd.key_at)
                                ? StateShape::geth_dump_lines
                                : StateShape::reth_dump;
                first = false;
            }
            if (!a.address && !pd.key_at) {
                return fail_at(
                    at, "account " + std::string(label) + ": neither \"address\" nor \"key\"");
            }
        }
    }

    // One account object. addr: the address the account is named by (nullptr: none; a dump's
    // account may give it in "address", or only its hash in "key").
    Status parse_account(Collected& c, Rules rules, std::string_view label, const char* at,
                         const Address* addr) {
        skip_ws();
        if (peek() != '{') {
            return Error{Errc::bad_input,
                         where(p_) + ": account " + std::string(label) + ": not an object"};
        }
        StateAccount& a = c.accounts.emplace_back();
        Pending& pd = c.pending.emplace_back();
        pd.label = label;
        a.line = line_of(at);
        if (addr) a.address = *addr;
        bool balance = false;
        if (!open_is_empty('}')) {
            while (true) {
                skip_ws();
                if (peek() != '"') return fail("expected a string key");
                MPT_TRY(const std::string_view field_view, string_view_value());
                // Go's encoding/json matches field names without regard to case; the name is
                // kept, lowered, past the next string.
                char field_buf[16];
                std::string_view field = lowered(field_view, field_buf);
                if (field == "codehash") field = "codeHash";  // as errors name it
                MPT_RETURN_IF_ERROR(colon());
                const char* value_at = p_;
                if ((field == "balance" || field == "nonce") && peek() == 'n') {
                    // A null quantity leaves the field unset (gencodec decodes into pointers):
                    // a nonce of zero, a balance still missing.
                    MPT_RETURN_IF_ERROR(skip_value(2));
                    if (field == "balance") balance = false;
                    if (field == "nonce") a.account.nonce = 0;
                } else if (field == "balance") {
                    MPT_TRY(const std::string_view q, quantity_text(label, field));
                    if (const char* why = parse_quantity(q, 32, a.account.balance.data())) {
                        return field_error(value_at, label, field, why);
                    }
                    balance = true;
                } else if (field == "nonce") {
                    MPT_TRY(const std::string_view q, quantity_text(label, field));
                    uint8_t n[8];
                    if (const char* why = parse_quantity(q, 8, n)) {
                        return field_error(value_at, label, field, why);
                    }
                    a.account.nonce = 0;
                    for (uint8_t b : n) a.account.nonce = a.account.nonce << 8 | b;
                } else if (field == "code") {
                    if (peek() == 'n') {
                        MPT_RETURN_IF_ERROR(skip_value(2));
                        a.code.clear();
                    } else {
                        MPT_TRY(const std::string_view s, string_field(label, field));
                        if (const char* why = parse_hex_bytes(s, a.code)) {
                            return field_error(value_at, label, field, why);
                        }
                    }
                } else if (field == "storage") {
                    a.storage.clear();
                    MPT_RETURN_IF_ERROR(parse_storage(a, label));
                } else if (rules == Rules::dump && field == "root") {
                    MPT_TRY(const std::string_view s, string_field(label, field));
                    Hash256 h;
                    if (const char* why = parse_fixed_hash(s, h)) {
                        return field_error(value_at, label, field, why);
                    }
                    a.claimed_storage_root = h;
                } else if (rules == Rules::dump && field == "codeHash") {
                    MPT_TRY(const std::string_view s, string_field(label, field));
                    if (const char* why = parse_fixed_hash(s, pd.code_hash)) {
                        return field_error(value_at, label, field, why);
                    }
                    pd.code_hash_at = value_at;
                } else if (rules == Rules::dump && field == "key") {
                    MPT_TRY(const std::string_view s, string_field(label, field));
                    if (const char* why = parse_fixed_hash(s, pd.key)) {
                        return field_error(value_at, label, field, why);
                    }
                    pd.key_at = value_at;
                } else if (rules == Rules::dump && field == "address") {
                    MPT_TRY(const std::string_view s, string_field(label, field));
                    Address given;
                    if (const char* why = parse_address(s, given)) {
                        return field_error(value_at, label, field, why);
                    }
                    if (addr && given != *addr) {
                        return field_error(value_at, label, field,
                                           "differs from the address the account is named by");
                    }
                    a.address = given;
                } else {
                    // Decoders of both clients ignore fields they do not know (secretKey too).
                    MPT_RETURN_IF_ERROR(skip_value(2));
                }
                MPT_TRY(const bool more, next_item('}'));
                if (!more) break;
            }
        }
        if (!balance) {
            return Error{Errc::bad_input, where(at) + ": account " + std::string(label) +
                                              ": field \"balance\": missing (geth requires it)"};
        }
        return {};
    }

    Status parse_storage(StateAccount& a, std::string_view label) {
        if (peek() == 'n') return skip_value(2);
        if (peek() != '{') return field_error(p_, label, "storage", "not an object");
        if (open_is_empty('}')) return {};
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            const char* key_at = p_;
            MPT_TRY(const std::string_view k, string_view_value());
            U256 slot;
            if (const char* why = parse_storage_word(k, slot)) {
                return field_error(key_at, label, "storage", "key " + std::string(k) + ": " + why);
            }
            MPT_RETURN_IF_ERROR(colon());
            const char* value_at = p_;
            if (peek() == 'n') {
                // Go leaves a map value it reads null at its zero value.
                MPT_RETURN_IF_ERROR(skip_value(3));
                StorageEntry& e = a.storage.emplace_back();
                e.slot = slot;
                e.value.fill(0);
                MPT_TRY(const bool more, next_item('}'));
                if (!more) return {};
                continue;
            }
            if (peek() != '"') {
                return field_error(value_at, label, "storage",
                                   "slot " + to_hex(slot) + ": value is not a string");
            }
            MPT_TRY(const std::string_view v, string_view_value());
            StorageEntry& e = a.storage.emplace_back();
            e.slot = slot;
            if (const char* why = parse_storage_word(v, e.value)) {
                return field_error(
                    value_at, label, "storage",
                    "slot " + to_hex(slot) + ": value " + std::string(v) + ": " + why);
            }
            MPT_TRY(const bool more, next_item('}'));
            if (!more) return {};
        }
    }

    // A test of a BlockchainTests file; false when it is not of that shape.
    Result<bool> parse_test(BlockchainTest& t) {
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
    Status parse_blocks(std::optional<Hash256>& last) {
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
    Result<std::optional<Hash256>> header_state_root() {
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

    static Status in_test(const std::string& test, std::string_view member, Status s) {
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

    // The hash pass, the checks that need hashes, and the merging of repeated keys.
    Status finish(Collected& c, StateDoc& doc, unsigned threads) {
        const size_t n = c.accounts.size();
        size_t work = 0;
        for (const StateAccount& a : c.accounts) work += 1 + a.storage.size();
        std::vector<std::string> errors(n);
        constexpr size_t kChunk = 256;
        const size_t chunks = (n + kChunk - 1) / kChunk;
        // Threads only pay for themselves over thousands of hashes.
        const unsigned use = work >= 8192 ? threads : 1;
        run_tasks(use, chunks, [&](size_t chunk, unsigned) {
            const size_t end = std::min(n, (chunk + 1) * kChunk);
            for (size_t i = chunk * kChunk; i < end; ++i) {
                errors[i] = hash_account(c.accounts[i], c.pending[i]);
            }
        });
        for (const std::string& e : errors) {
            if (!e.empty()) return Error{Errc::bad_input, e};
        }
        doc.accounts = std::move(c.accounts);
        merge_repeated_accounts(doc.accounts);
        return {};
    }

    // Fills the hashes of one account and sorts its storage; an error line, or empty.
    std::string hash_account(StateAccount& a, const Pending& pd) const {
        if (a.address) {
            a.address_hash = keccak256(*a.address);
            if (pd.key_at && pd.key != a.address_hash) {
                return where(pd.key_at) + ": account " + std::string(pd.label) +
                       ": field \"key\": not keccak256 of the address";
            }
        } else {
            a.address_hash = pd.key;
        }
        if (!a.code.empty()) a.account.code_hash = keccak256(a.code);
        if (pd.code_hash_at) {
            if (!a.code.empty() && pd.code_hash != a.account.code_hash) {
                return where(pd.code_hash_at) + ": account " + std::string(pd.label) +
                       ": field \"codeHash\": not keccak256 of the code";
            }
            a.account.code_hash = pd.code_hash;
        }
        for (StorageEntry& e : a.storage) e.key = keccak256(*e.slot);
        // By key; of a repeated slot the last stays (a map's last assignment wins).
        std::stable_sort(
            a.storage.begin(), a.storage.end(),
            [](const StorageEntry& x, const StorageEntry& y) { return hash_less(x.key, y.key); });
        size_t out = 0;
        for (size_t i = 0; i < a.storage.size(); ++i) {
            if (i + 1 < a.storage.size() && a.storage[i + 1].key == a.storage[i].key) continue;
            if (out != i) a.storage[out] = a.storage[i];
            ++out;
        }
        a.storage.resize(out);
        return {};
    }

    // A repeated address keeps its first place and its last content.
    static void merge_repeated_accounts(std::vector<StateAccount>& accounts) {
        if (accounts.size() < 2) return;
        std::vector<uint32_t> order(accounts.size());
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
            return hash_less(accounts[x].address_hash, accounts[y].address_hash);
        });
        std::vector<bool> drop(accounts.size(), false);
        bool any = false;
        for (size_t i = 0; i + 1 < order.size();) {
            size_t j = i;
            while (j + 1 < order.size() &&
                   accounts[order[j + 1]].address_hash == accounts[order[i]].address_hash) {
                ++j;
            }
            if (j != i) {
                any = true;
                const size_t first_line = accounts[order[i]].line;
                accounts[order[i]] = std::move(accounts[order[j]]);
                accounts[order[i]].line = first_line;
                for (size_t k = i + 1; k <= j; ++k) drop[order[k]] = true;
            }
            i = j + 1;
        }
        if (!any) return;
        size_t out = 0;
        for (size_t i = 0; i < accounts.size(); ++i) {
            if (drop[i]) continue;
            if (out != i) accounts[out] = std::move(accounts[i]);
            ++out;
        }
        accounts.resize(out);
    }

    // A 32-byte hex field of a dump (hexutil.Bytes: 0x required).
    static const char* parse_fixed_hash(std::string_view s, Hash256& out) {
        if (!has_0x(s)) return "hex without the 0x prefix";
        return parse_hash(s, out);
    }

    Status colon() {
        skip_ws();
        if (peek() != ':') return fail("expected ':'");
        ++p_;
        skip_ws();
        return {};
    }

    // REQUIRES: p_ at a string. Its content: a view into the text when it has no escapes,
    // else into scratch_ (valid until the next string).
    Result<std::string_view> string_view_value() {
        const char* s = p_ + 1;
        const char* q = json_detail::scan_plain(s, end_);
        if (q != end_ && *q == '"') {
            p_ = q + 1;
            return std::string_view(s, static_cast<size_t>(q - s));
        }
        MPT_RETURN_IF_ERROR(lex_string());
        return std::string_view(scratch_);
    }

    Result<std::string_view> string_field(std::string_view label, std::string_view field) {
        if (peek() != '"') return field_error(p_, label, field, "not a string");
        return string_view_value();
    }

    // A quantity as a string, or as a JSON number (math.HexOrDecimal* take both).
    Result<std::string_view> quantity_text(std::string_view label, std::string_view field) {
        if (peek() == '"') return string_view_value();
        const char* start = p_;
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
            MPT_RETURN_IF_ERROR(skip_number());
            return std::string_view(start, static_cast<size_t>(p_ - start));
        }
        return field_error(p_, label, field, "not a string or a number");
    }

    Error field_error(const char* at, std::string_view label, std::string_view field,
                      const std::string& why) const {
        std::string d = where(at) + ": ";
        if (!label.empty()) d += "account " + std::string(label) + ": ";
        d += "field \"" + std::string(field) + "\": " + why;
        return {Errc::bad_input, d};
    }

    // A label that outlives the parse of the next string.
    std::string_view keep_label(std::string_view s) {
        if (s.data() >= begin_ && s.data() + s.size() <= end_) return s;
        return labels_.emplace_back(s);
    }
    std::string_view keep_label(std::string s) { return labels_.emplace_back(std::move(s)); }

    // The line of at, counted on from the last line asked for (accounts come in order).
    size_t line_of(const char* at) {
        if (at < line_at_) {
            line_at_ = begin_;
            line_ = 1;
        }
        for (const char* q;
             (q = static_cast<const char*>(
                  std::memchr(line_at_, '\n', static_cast<size_t>(at - line_at_)))) != nullptr;) {
            ++line_;
            line_at_ = q + 1;
        }
        return line_;
    }

    const char* line_at_;  // the start of line line_
    size_t line_ = 1;
    std::deque<std::string> labels_;
};

}  // namespace

Result<StateDoc> parse_state_document(std::string_view text, unsigned threads) {
    return StateParser(text).parse(threads == 0 ? 1 : threads);
}

Result<StateDoc> read_state_document(const std::string& path, unsigned threads) {
    MPT_TRY(const InputText text, load_input(path));
    auto doc = parse_state_document(text.view(), threads);
    if (!doc) {
        Error e = std::move(doc).error();
        if (e.file.empty()) e.file = path;
        return e;
    }
    return doc;
}

Result<std::optional<std::vector<BlockchainTest>>> parse_blockchain_tests(std::string_view text) {
    return StateParser(text).parse_tests();
}

}  // namespace mpt
