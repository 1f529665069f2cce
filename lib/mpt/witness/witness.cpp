#include <mpt/witness/witness.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/block_json.hpp>
#include <mpt/state/json_fields.hpp>
#include <mpt/trie/task_pool.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

namespace mpt {
namespace {

bool is_key(const bytes& key) noexcept { return key.size() == 20 || key.size() == 32; }

Error key_error(const bytes& key, const std::string& where) {
    return Error{Errc::bad_input, where + ": a key of " + std::to_string(key.size()) +
                                      " bytes, neither an address (20) nor a slot (32)"};
}

// The items of the array member name of a witness object, each 0x hex; absent or null is
// none unless required.
Result<std::vector<bytes>> hex_items(const JsonValue& obj, std::string_view name, bool required) {
    const JsonFields f("");
    const auto v = obj.find(name);
    if (!v || v->is_null()) {
        if (!required) return std::vector<bytes>{};
        return Error{Errc::bad_input, "the witness has no \"" + std::string(name) + "\" member (" +
                                          obj.where() + ")"};
    }
    const std::string field(name);
    if (!v->is_array()) return f.fail(*v, field, Errc::bad_input, "not an array");
    // In runs on up to four threads (a witness's state is some 50 MB of hex); the error is
    // the first item's that fails, as one thread would find it.
    const size_t n = v->size();
    std::vector<bytes> out(n);
    constexpr size_t kRun = 8192;
    const size_t runs = (n + kRun - 1) / kRun;
    std::vector<std::optional<Error>> errors(runs);
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    run_tasks(threads, runs, [&](size_t r, unsigned) {
        for (size_t i = r * kRun; i < std::min(n, (r + 1) * kRun); ++i) {
            const JsonValue item = (*v)[i];
            auto b = f.data(item, field);
            if (!b) {
                // Read again for the error only, naming the item by its place.
                errors[r] = f.data(item, field + "[" + std::to_string(i) + "]").error();
                return;
            }
            out[i] = std::move(*b);
        }
    });
    for (std::optional<Error>& e : errors) {
        if (e) return std::move(*e);
    }
    return out;
}

Result<Witness> read_json(std::string_view text) {
    MPT_TRY(const JsonTree tree, JsonTree::parse(text));
    MPT_TRY(const std::optional<JsonValue> result, json_rpc_result(tree.root()));
    const JsonValue w = result ? *result : tree.root();
    if (!w.is_object()) {
        return Error{Errc::bad_input, "the witness (" + w.where() +
                                          ") is not an object {\"state\", \"codes\", \"keys\", "
                                          "\"headers\"}"};
    }
    Witness out;
    MPT_TRY(out.state, hex_items(w, "state", true));
    MPT_TRY(out.codes, hex_items(w, "codes", false));
    MPT_TRY(out.keys, hex_items(w, "keys", false));
    for (size_t i = 0; i < out.keys.size(); ++i) {
        // Where a key stands (lines counted from the top) only for the one refused.
        if (!is_key(out.keys[i])) {
            return key_error(out.keys[i], "keys[" + std::to_string(i) + "] (" +
                                              (*w.find("keys"))[i].where() + ")");
        }
    }
    bool objects = false;
    if (const auto hs = w.find("headers"); hs && !hs->is_null()) {
        if (!hs->is_array()) {
            return JsonFields("").fail(*hs, "headers", Errc::bad_input, "not an array");
        }
        for (size_t i = 0; i < hs->size(); ++i) {
            const JsonValue h = (*hs)[i];
            const std::string at = "headers[" + std::to_string(i) + "]";
            if (h.is_object()) {
                objects = true;
                MPT_TRY(bytes rlp, encode_header_json(h, at));
                out.headers.push_back(std::move(rlp));
            } else {
                MPT_TRY(bytes rlp, JsonFields("").data(h, at));
                // One RLP list, as the RLP shape carries it (header_facts reads the rest).
                const auto item = rlp::decode_single(rlp);
                if (!item || !item->is_list) {
                    return JsonFields("").fail(h, at, Errc::bad_input,
                                               "not a header's RLP (one RLP list)");
                }
                out.headers.push_back(std::move(rlp));
            }
        }
    }
    out.shape = objects ? "JSON, headers as objects" : "JSON";
    if (result) out.shape += " (JSON-RPC result)";
    return out;
}

// Reads binary RLP, each error naming the part and its byte offset.
class RlpParts {
public:
    explicit RlpParts(bytes_view all) : base_(all.data()) {}

    Result<rlp::Item> next(bytes_view& in, const std::string& what) const {
        const size_t at = static_cast<size_t>(in.data() - base_);
        auto item = rlp::decode_item(in);
        if (!item) {
            const Error& e = item.error();
            return Error{
                e.code, what + " (byte " + std::to_string(at) +
                            "): " + (e.detail.empty() ? std::string(errc_name(e.code)) : e.detail)};
        }
        return *item;
    }

    // The items of a list of strings (codes, state, keys): each its payload.
    Result<std::vector<bytes>> strings(const rlp::Item& list, const std::string& what) const {
        std::vector<bytes> out;
        bytes_view in = list.payload;
        while (!in.empty()) {
            const std::string at = what + " " + std::to_string(out.size() + 1);
            const size_t offset = static_cast<size_t>(in.data() - base_);
            MPT_TRY(const rlp::Item item, next(in, at));
            if (item.is_list) {
                return Error{Errc::bad_input,
                             at + " (byte " + std::to_string(offset) + ") is a list, not bytes"};
            }
            out.emplace_back(item.payload.begin(), item.payload.end());
        }
        return out;
    }

    // The headers: each a list, kept whole.
    Result<std::vector<bytes>> lists(const rlp::Item& list, const std::string& what) const {
        std::vector<bytes> out;
        bytes_view in = list.payload;
        while (!in.empty()) {
            const std::string at = what + " " + std::to_string(out.size() + 1);
            const bytes_view start = in;
            MPT_TRY(const rlp::Item item, next(in, at));
            if (!item.is_list) {
                return Error{
                    Errc::bad_input,
                    at + " (byte " + std::to_string(start.data() - base_) + ") is not a list"};
            }
            const bytes_view whole = start.first(start.size() - in.size());
            out.emplace_back(whole.begin(), whole.end());
        }
        return out;
    }

private:
    const uint8_t* base_;
};

Result<Witness> read_rlp(bytes_view input) {
    const RlpParts r(input);
    bytes_view in = input;
    MPT_TRY(const rlp::Item top, r.next(in, "the witness"));
    if (!in.empty()) {
        return Error{Errc::rlp_trailing_bytes, std::to_string(in.size()) +
                                                   " bytes after the witness (byte " +
                                                   std::to_string(input.size() - in.size()) + ")"};
    }
    if (!top.is_list) return Error{Errc::bad_input, "the witness is not an RLP list"};
    std::vector<rlp::Item> parts;
    for (bytes_view p = top.payload; !p.empty();) {
        static const char* const kNames[] = {"headers", "codes", "state", "keys"};
        const std::string what = parts.size() < 4 ? kNames[parts.size()] : "item";
        MPT_TRY(const rlp::Item item, r.next(p, what));
        parts.push_back(item);
    }
    if (parts.size() != 3 && parts.size() != 4) {
        return Error{Errc::bad_input, "the witness has " + std::to_string(parts.size()) +
                                          " items; want [headers, codes, state] or [headers, "
                                          "codes, state, keys]"};
    }
    static const char* const kNames[] = {"headers", "codes", "state", "keys"};
    for (size_t i = 0; i < parts.size(); ++i) {
        if (!parts[i].is_list) {
            return Error{Errc::bad_input, std::string("the witness's ") + kNames[i] + " (item " +
                                              std::to_string(i + 1) + ") is not a list"};
        }
    }
    Witness out;
    MPT_TRY(out.headers, r.lists(parts[0], "header"));
    MPT_TRY(out.codes, r.strings(parts[1], "code"));
    MPT_TRY(out.state, r.strings(parts[2], "state node"));
    if (parts.size() == 4) {
        MPT_TRY(out.keys, r.strings(parts[3], "key"));
        for (size_t i = 0; i < out.keys.size(); ++i) {
            if (!is_key(out.keys[i])) return key_error(out.keys[i], "key " + std::to_string(i + 1));
        }
    }
    out.shape =
        parts.size() == 4 ? "RLP [headers, codes, state, keys]" : "RLP [headers, codes, state]";
    return out;
}

size_t probe_start(const Hash256& h) noexcept { return Hash256Hasher{}(h); }

// Bytes 8 to 11 of h: the slot's check, apart from the bytes that chose the slot.
uint32_t tag_of(const Hash256& h) noexcept {
    uint32_t t;
    std::memcpy(&t, h.data() + 8, 4);
    return t;
}

// a == b in four word compares (std::array's == calls memcmp).
bool same_hash(const Hash256& a, const Hash256& b) noexcept {
    uint64_t x[4];
    uint64_t y[4];
    std::memcpy(x, a.data(), 32);
    std::memcpy(y, b.data(), 32);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3])) == 0;
}

}  // namespace

Result<Witness> read_witness(std::string_view input) {
    const std::string_view text = json_detail::without_bom(input);
    size_t first = 0;
    while (first < text.size() && json_detail::is_ws(text[first])) ++first;
    if (first < text.size() && text[first] == '{') return read_json(text);
    if (text.substr(first).starts_with("0x") || text.substr(first).starts_with("0X")) {
        size_t end = text.size();
        while (end > first && json_detail::is_ws(text[end - 1])) --end;
        auto b = from_hex(text.substr(first, end - first));
        if (!b) return Error{b.error().code, "0x hex witness: " + b.error().detail};
        MPT_TRY(Witness w, read_rlp(*b));
        w.shape += ", as 0x hex";
        return w;
    }
    const auto* p = reinterpret_cast<const uint8_t*>(input.data());
    if (!input.empty() && p[0] >= 0xc0) return read_rlp(bytes_view(p, input.size()));
    if (is_sqlite_database(input)) {
        return Error{Errc::bad_input, "an SQLite database (a trie file?), not a witness"};
    }
    return Error{Errc::bad_input,
                 "not a witness: JSON ({\"state\": [...], ...}), RLP or 0x hex RLP expected"};
}

bytes encode_witness_rlp(const Witness& w) {
    // Each list's payload written apart: a witness passes the 65,535 bytes rlp::begin_list
    // reserves for.
    const auto list = [](bytes& out, const std::vector<bytes>& items, bool as_strings) {
        bytes payload;
        for (const bytes& i : items) {
            if (as_strings) {
                rlp::append_string(payload, i);
            } else {
                payload.insert(payload.end(), i.begin(), i.end());
            }
        }
        rlp::append_list_header(out, payload.size());
        out.insert(out.end(), payload.begin(), payload.end());
    };
    bytes parts;
    list(parts, w.headers, false);
    list(parts, w.codes, true);
    list(parts, w.state, true);
    list(parts, w.keys, true);
    bytes out;
    rlp::append_list_header(out, parts.size());
    out.insert(out.end(), parts.begin(), parts.end());
    return out;
}

Result<std::vector<HeaderFacts>> witness_headers(const Witness& w) {
    std::vector<HeaderFacts> out;
    out.reserve(w.headers.size());
    for (size_t i = 0; i < w.headers.size(); ++i) {
        auto h = header_facts(w.headers[i]);
        if (!h) {
            return Error{h.error().code,
                         "header " + std::to_string(i + 1) + ": " + h.error().detail};
        }
        out.push_back(*h);
    }
    return out;
}

Result<std::optional<Hash256>> witness_pre_state_root(const std::vector<HeaderFacts>& headers) {
    if (headers.empty()) return std::optional<Hash256>{};
    std::vector<const HeaderFacts*> by_number;
    by_number.reserve(headers.size());
    for (const HeaderFacts& h : headers) by_number.push_back(&h);
    std::stable_sort(
        by_number.begin(), by_number.end(),
        [](const HeaderFacts* a, const HeaderFacts* b) { return a->number < b->number; });
    for (size_t i = 1; i < by_number.size(); ++i) {
        const HeaderFacts& a = *by_number[i - 1];
        const HeaderFacts& b = *by_number[i];
        const std::string pair = "headers " + std::to_string(a.number) + " (" + to_hex(a.hash) +
                                 ") and " + std::to_string(b.number) + " (" + to_hex(b.hash) + ")";
        if (a.number == b.number) {
            return Error{Errc::bad_input, "two headers of block " + std::to_string(a.number) +
                                              ": " + to_hex(a.hash) + " and " + to_hex(b.hash)};
        }
        if (b.number != a.number + 1 || b.parent_hash != a.hash) {
            return Error{Errc::bad_input,
                         "the headers do not form a chain: " + pair +
                             (b.number != a.number + 1
                                  ? " are not consecutive"
                                  : ", the second's parentHash is " + to_hex(b.parent_hash))};
        }
    }
    return std::optional<Hash256>(by_number.back()->state_root);
}

std::vector<Hash256> node_hashes(const std::vector<bytes>& nodes) {
    std::vector<Hash256> out;
    reserve_huge(out, nodes.size());
    out.resize(nodes.size());
    constexpr size_t kChunk = 8192;
    const size_t chunks = (nodes.size() + kChunk - 1) / kChunk;
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    run_tasks(threads, chunks, [&](size_t c, unsigned) {
        const size_t begin = c * kChunk;
        const size_t end = std::min(nodes.size(), begin + kChunk);
        std::vector<bytes_view> views(nodes.begin() + static_cast<ptrdiff_t>(begin),
                                      nodes.begin() + static_cast<ptrdiff_t>(end));
        keccak256_batch(views, std::span(out).subspan(begin, end - begin));
    });
    return out;
}

NodeIndex::NodeIndex(std::span<const Hash256> hashes) : hashes_(hashes), first_(hashes.size()) {
    // Witnesses are far below 2^32 nodes: a reader refuses inputs past 1 GiB.
    MPT_ASSERT(hashes.size() < UINT32_MAX);
    size_t capacity = 16;
    while (capacity < 2 * hashes.size()) capacity *= 2;
    reserve_huge(slots_, capacity);
    slots_.resize(capacity);
    mask_ = capacity - 1;
    for (size_t i = 0; i < hashes.size(); ++i) {
        Slot& s = slots_[probe(hashes[i])];
        if (s.listing == 0) {
            s = {tag_of(hashes[i]), static_cast<uint32_t>(i + 1)};
            first_[i] = static_cast<uint32_t>(i);
        } else {
            first_[i] = s.listing - 1;
            ++duplicated_;
        }
    }
}

size_t NodeIndex::probe(const Hash256& h) const noexcept {
    const uint32_t tag = tag_of(h);
    for (size_t at = probe_start(h) & mask_;; at = (at + 1) & mask_) {
        const Slot& s = slots_[at];
        if (s.listing == 0 || (s.tag == tag && same_hash(hashes_[s.listing - 1], h))) return at;
    }
}

void NodeIndex::prefetch(const Hash256& h) const noexcept {
    __builtin_prefetch(&slots_[probe_start(h) & mask_]);
}

size_t NodeIndex::find(const Hash256& h) const noexcept {
    const Slot& s = slots_[probe(h)];
    return s.listing == 0 ? kNone : s.listing - 1;
}

}  // namespace mpt
