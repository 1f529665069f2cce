#include <mpt/proof/detail/proof_index.hpp>
#include <mpt/proof/proof.hpp>

#include <set>

namespace mpt {

Result<std::vector<bytes>> prove(NodeReader& reader, const Hash256& root, bytes_view key,
                                 std::optional<bytes>* value) {
    std::vector<bytes> proof;
    if (value != nullptr) value->reset();
    bytes path;
    MPT_TRY(const bytes_view found, prove_each(reader, root, key, path, [&](bytes_view row) {
                proof.emplace_back(row.begin(), row.end());
            }));
    if (value != nullptr && !found.empty()) value->emplace(found.begin(), found.end());
    return proof;
}

Result<std::optional<bytes>> verify_proof(const Hash256& root, bytes_view key,
                                          const std::vector<bytes>& proof) {
    if (root == kEmptyRoot) return std::optional<bytes>{};
    const ProofIndex index(proof);
    PathCursor at(key);
    const bytes_view* found = index.find(root);
    if (found == nullptr) return invalid(missing_reason(root, 0));
    bytes_view rlp = *found;
    // Each turn consumes at least one nibble (an extension's path is never empty) or ends,
    // so the walk is bounded by the key's length whatever the proof holds.
    while (true) {
        auto v = decode_node(rlp);
        if (!v) return invalid(decode_reason(v.error(), at.depth()));
        const Descent d = descend(*v, at);
        if (d.kind == Descent::Kind::absent) return std::optional<bytes>{};
        if (d.kind == Descent::Kind::value)
            return std::optional<bytes>{bytes(d.ref.begin(), d.ref.end())};
        if (d.ref.size() == 32) {
            Hash256 h;
            std::memcpy(h.data(), d.ref.data(), 32);
            found = index.find(h);
            if (found == nullptr) return invalid(missing_reason(h, at.depth()));
            rlp = *found;
        } else {
            rlp = d.ref;  // embedded: it lives inside its parent
        }
    }
}

Status check_proof_claim(const Hash256& root, bytes_view key, const std::optional<bytes>& claimed,
                         const std::vector<bytes>& proof) {
    MPT_TRY(const std::optional<bytes> proven, verify_proof(root, key, proof));
    const bool claims_value = claimed.has_value() && !claimed->empty();
    if (!proven) {
        if (claims_value) return invalid("the path diverges yet a value is claimed");
        return {};
    }
    if (!claims_value) return invalid("key is present but the document claims absence");
    if (*proven != *claimed) return invalid("value mismatch");
    return {};
}

Result<RangeProof> prove_range(NodeReader& reader, const Hash256& root, bytes_view from,
                               const bytes* to, size_t limit, size_t max_bytes) {
    if (limit == 0) return Error{Errc::bad_input, "a range limit must be at least 1"};
    RangeProof out;
    const Trie trie = Trie::open(&reader, root);
    size_t total = 0;
    MPT_RETURN_IF_ERROR(trie.for_each(from, [&](bytes_view k, bytes_view v) {
        out.keys.emplace_back(k.begin(), k.end());
        out.values.emplace_back(v.begin(), v.end());
        total += k.size() + v.size();
        if (out.keys.size() >= limit) return false;
        // As snap: the first key at or past the limit is the last one returned.
        if (to != nullptr && compare_bytes(k, *to) >= 0) return false;
        return total < max_bytes;
    }));
    MPT_TRY(out.proof, prove(reader, root, from));
    if (!out.keys.empty()) {
        MPT_TRY(std::vector<bytes> last, prove(reader, root, out.keys.back()));
        std::set<Hash256> have;
        for (const bytes& n : out.proof) have.insert(keccak256(n));
        for (bytes& n : last) {
            if (have.insert(keccak256(n)).second) out.proof.push_back(std::move(n));
        }
    }
    return out;
}

}  // namespace mpt
