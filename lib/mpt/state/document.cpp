// State documents (document.hpp): shape detection, the whole-document and line-by-line
// readers, and the hash pass that finishes every shape. Field values and account objects
// are read in document_fields.cpp, BlockchainTests files in document_tests.cpp.

#include <mpt/state/document.hpp>
#include <mpt/state/document_parse.hpp>

#include <mpt/core/keccak.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/trie/task_pool.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <span>

namespace mpt::document_detail {

Result<StateDoc> StateParser::parse(unsigned threads) {
    skip_ws();
    if (p_ == end_) return fail("empty document; expected an object");
    if (peek() != '{') {
        MPT_RETURN_IF_ERROR(skip_value(0));
        MPT_RETURN_IF_ERROR(expect_end());
        return Error{Errc::bad_input, "a state document is a JSON object"};
    }
    Collected c;
    if (starts_mpt_dump(std::string_view(p_, static_cast<size_t>(end_ - p_)))) {
        StateDoc doc;
        MPT_RETURN_IF_ERROR(parse_lines(c, doc));
        doc.shape = StateShape::mpt_dump;
        MPT_RETURN_IF_ERROR(finish(c, doc, threads));
        return doc;
    }
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
        const ShapeFault fault = object_shape(
            {top.alloc_at != nullptr, top.accounts_at != nullptr || top.root_at != nullptr,
             top.address_at != nullptr, top.other_at != nullptr},
            doc.shape);
        if (fault != ShapeFault::none) {
            const char* at = fault == ShapeFault::other_member ? top.other_at : top.address_at;
            return shape_error(fault, where(at), top.other_name);
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

ShapeFault object_shape(const TopKinds& top, StateShape& shape) {
    if (top.alloc) {
        shape = StateShape::genesis;
        return top.address ? ShapeFault::address_beside_alloc : ShapeFault::none;
    }
    if (top.accounts_or_root) {
        shape = StateShape::geth_dump;
        return top.address ? ShapeFault::address_beside_dump : ShapeFault::none;
    }
    shape = StateShape::alloc;
    return top.other ? ShapeFault::other_member : ShapeFault::none;
}

Error shape_error(ShapeFault fault, const std::string& place, std::string_view other_name) {
    switch (fault) {
        case ShapeFault::address_beside_alloc:
            return {Errc::bad_json, place + ": an address beside \"alloc\""};
        case ShapeFault::address_beside_dump:
            return {Errc::bad_json, place + ": an address beside \"accounts\" or \"root\""};
        default:
            return {Errc::bad_input,
                    place + ": member \"" + std::string(other_name) +
                        "\" is not an address (expected a genesis with \"alloc\", an "
                        "alloc of addresses, or a dump with \"accounts\")"};
    }
}

Status StateParser::parse_top(Collected& c, Top& top) {
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
        } else if (!top.alloc_at && !top.accounts_at && parse_address(name_view, addr) == nullptr) {
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

// An object of accounts, each member read by member: an alloc or a dump's "accounts".
Status StateParser::parse_members(Collected& c, const char* not_object,
                                  Status (StateParser::*member)(Collected&)) {
    if (peek() != '{') return fail(not_object);
    if (open_is_empty('}')) return {};
    while (true) {
        MPT_RETURN_IF_ERROR((this->*member)(c));
        MPT_TRY(const bool more, next_item('}'));
        if (!more) return {};
    }
}

// An alloc object: {address: account}.
Status StateParser::parse_alloc(Collected& c) {
    return parse_members(c, "an alloc is an object of accounts", &StateParser::alloc_member);
}

// geth's dump accounts: {address or "pre(0x<hash>)": account} (core/state/dump.go keys
// an account without an address preimage by its hash).
Status StateParser::parse_dump_accounts(Collected& c) {
    return parse_members(c, "\"accounts\" is an object of accounts", &StateParser::dump_member);
}

Result<std::string_view> StateParser::member_name(const char*& name_at) {
    skip_ws();
    if (peek() != '"') return fail("expected a string key");
    name_at = p_;
    MPT_TRY(const std::string_view name_view, string_view_value());
    return keep_label(name_view);
}

Error StateParser::name_error(const char* name_at, std::string_view label, const char* why) const {
    return Error{Errc::bad_hex, where(name_at) + ": account " + std::string(label) + ": " + why};
}

Status StateParser::alloc_member(Collected& c) {
    const char* name_at = nullptr;
    MPT_TRY(const std::string_view label, member_name(name_at));
    Address addr;
    if (const char* why = parse_address(label, addr)) return name_error(name_at, label, why);
    MPT_RETURN_IF_ERROR(colon());
    return parse_account(c, Rules::alloc, label, name_at, &addr);
}

Status StateParser::dump_member(Collected& c) {
    const char* name_at = nullptr;
    MPT_TRY(const std::string_view label, member_name(name_at));
    Address addr;
    Hash256 hash;
    const bool by_hash = label.starts_with("pre(") && label.ends_with(")");
    if (const char* why = by_hash ? parse_hash(label.substr(4, label.size() - 5), hash)
                                  : parse_address(label, addr)) {
        return name_error(name_at, label, why);
    }
    MPT_RETURN_IF_ERROR(colon());
    MPT_RETURN_IF_ERROR(parse_account(c, Rules::dump, label, name_at, by_hash ? nullptr : &addr));
    if (by_hash) {
        Pending& pd = c.pending.back();
        if (pd.key_at && pd.key != hash) {
            return field_error(pd.key_at, label, "key",
                               "differs from the hash the account is named by");
        }
        pd.key = hash;
        if (!pd.key_at) pd.key_at = name_at;
    }
    return {};
}

// The accounts after a {"root": ...} line, one object each.
Status StateParser::parse_lines(Collected& c, StateDoc& doc) {
    bool first = true;
    while (true) {
        skip_ws();
        if (p_ == end_) return {};
        MPT_RETURN_IF_ERROR(line_account(c, doc, first));
        first = false;
    }
}

Status StateParser::line_account(Collected& c, StateDoc& doc, bool first) {
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
    }
    if (!a.address && !pd.key_at) {
        return fail_at(at, "account " + std::string(label) + ": neither \"address\" nor \"key\"");
    }
    return {};
}

// The hash pass, the checks that need hashes, and the merging of repeated keys.
Status StateParser::finish(Collected& c, StateDoc& doc, unsigned threads) {
    const size_t n = c.accounts.size();
    size_t work = 0;
    for (const StateAccount& a : c.accounts) work += 1 + a.storage.size();
    std::vector<std::string> errors(n);
    constexpr size_t kChunk = 256;
    const size_t chunks = (n + kChunk - 1) / kChunk;
    // Threads only pay for themselves over thousands of hashes.
    const unsigned use = work >= 8192 ? threads : 1;
    run_tasks(use, chunks, [&](size_t chunk, unsigned) {
        const size_t begin = chunk * kChunk;
        const size_t end = std::min(n, begin + kChunk);
        // The chunk's addresses hashed together on the SIMD lanes.
        std::array<Hash256, kChunk> hashes;
        const auto keep = [&](size_t i, const Hash256& h) { hashes[i - begin] = h; };
        KeccakBatcher<size_t, decltype(keep)> batch(keep);
        for (size_t i = begin; i < end; ++i) {
            const std::optional<Address>& a = c.accounts[i].address;
            if (a) batch.add(bytes_view(a->data(), a->size()), i);
        }
        batch.flush();
        for (size_t i = begin; i < end; ++i) {
            const Hash256* h = c.accounts[i].address ? &hashes[i - begin] : nullptr;
            errors[i] = hash_account(c.accounts[i], c.pending[i], h);
        }
    });
    for (const std::string& e : errors) {
        if (!e.empty()) return Error{Errc::bad_input, e};
    }
    doc.accounts = std::move(c.accounts);
    merge_repeated_accounts(doc.accounts);
    return {};
}

namespace {

// keccak256 of a slot below 256 (a contract's own variables, from slot 0 on, the same in every
// contract), from a table made once: in a state with many contracts most of their hashes
// repeat. nullptr for a larger slot.
const Hash256* small_slot_hash(const U256& slot) noexcept {
    static const std::array<Hash256, 256> kSmall = [] {
        std::array<Hash256, 256> t;
        U256 s{};
        for (size_t i = 0; i < t.size(); ++i) {
            s[31] = static_cast<uint8_t>(i);
            t[i] = keccak256(s);
        }
        return t;
    }();
    uint64_t w[4];
    std::memcpy(w, slot.data(), sizeof w);
    const bool small = (w[0] | w[1] | w[2]) == 0 && std::all_of(slot.begin() + 24, slot.end() - 1,
                                                                [](uint8_t b) { return b == 0; });
    return small ? &kSmall[slot[31]] : nullptr;
}

// Fills the key of each entry named by its slot: a small slot's from the table, the others'
// hashed together on the SIMD lanes.
void hash_slots(std::vector<StorageEntry>& storage) noexcept {
    const auto set_key = [](StorageEntry* e, const Hash256& h) { e->key = h; };
    KeccakBatcher<StorageEntry*, decltype(set_key)> batch(set_key);
    for (StorageEntry& e : storage) {
        if (!e.slot) continue;  // named by its hash (pre(0x...))
        if (const Hash256* h = small_slot_hash(*e.slot)) {
            e.key = *h;
            continue;
        }
        batch.add(bytes_view(e.slot->data(), e.slot->size()), &e);
    }
    batch.flush();
}

}  // namespace

bool starts_mpt_dump(std::string_view text) noexcept {
    const auto hex_then_nonce = [&](std::string_view head, size_t digits) {
        if (!text.starts_with(head)) return false;
        const std::string_view rest = text.substr(head.size());
        return rest.size() >= digits + 10 &&
               std::all_of(
                   rest.begin(), rest.begin() + static_cast<ptrdiff_t>(digits),
                   [](char c) { return kHexDigitValue[static_cast<uint8_t>(c)] != 0xff; }) &&
               rest.substr(digits).starts_with("\",\"nonce\":");
    };
    return hex_then_nonce("{\"address\":\"0x", 40) || hex_then_nonce("{\"key\":\"0x", 64);
}

// Fills the hashes of one account and sorts its storage; an error line, or empty.
std::string StateParser::hash_account(StateAccount& a, const Pending& pd,
                                      const Hash256* address_hash) const {
    if (a.address) {
        a.address_hash = address_hash != nullptr ? *address_hash : keccak256(*a.address);
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
    hash_slots(a.storage);
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
void StateParser::merge_repeated_accounts(std::vector<StateAccount>& accounts) {
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

}  // namespace mpt::document_detail

namespace mpt {

Result<StateDoc> parse_state_document(std::string_view text, unsigned threads) {
    return document_detail::StateParser(json_detail::without_bom(text))
        .parse(threads == 0 ? 1 : threads);
}

namespace {

// Moves p past the JSON string at p (at its opening quote); false when the text ends first.
bool skip_string(const char*& p, const char* end) noexcept {
    for (++p; p != end; ++p) {
        if (*p == '\\') {
            if (++p == end) return false;
        } else if (*p == '"') {
            ++p;
            return true;
        }
    }
    return false;
}

void skip_space(const char*& p, const char* end) noexcept {
    while (p != end && json_detail::is_ws(*p)) ++p;
}

// A member whose object value makes a state document: an alloc's address (40 hex digits, 0x
// optional), a genesis's "alloc" or "config", a dump's "accounts".
bool is_state_member(std::string_view name) noexcept {
    if (name == "alloc" || name == "config" || name == "accounts") return true;
    if (name.starts_with("0x") || name.starts_with("0X")) name.remove_prefix(2);
    return name.size() == 40 && std::all_of(name.begin(), name.end(), [](char c) {
               return kHexDigitValue[static_cast<uint8_t>(c)] != 0xff;
           });
}

}  // namespace

bool looks_like_state_document(std::string_view head) noexcept {
    head = json_detail::without_bom(head);
    const char* p = head.data();
    const char* const end = p + head.size();
    skip_space(p, end);
    if (document_detail::starts_mpt_dump(std::string_view(p, end - p))) return true;
    if (p == end || *p != '{') return false;
    ++p;
    for (;;) {
        skip_space(p, end);
        const char* name = p + 1;
        if (p == end || *p != '"' || !skip_string(p, end)) return false;
        const std::string_view member(name, static_cast<size_t>(p - 1 - name));
        skip_space(p, end);
        if (p == end || *p != ':') return false;
        ++p;
        skip_space(p, end);
        if (p == end) return false;
        // An object where a key/value file holds a string or null: an account, an alloc, a
        // dump's accounts, a genesis's config (a test file's tests are objects too: no state).
        if (*p == '{') return is_state_member(member);
        if (*p == '"') {
            if (!skip_string(p, end)) return false;
        } else {
            while (p != end && *p != ',' && *p != '}' && !json_detail::is_ws(*p)) ++p;
        }
        skip_space(p, end);
        if (p == end) return false;
        if (*p == ',') {
            ++p;
            continue;
        }
        if (*p != '}') return false;
        // One object of strings, then another: the first line of a dump by lines.
        ++p;
        skip_space(p, end);
        return p != end && *p == '{';
    }
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

}  // namespace mpt
