// What the proof verifiers share (internal to lib/mpt/proof/): the nodes of a proof by
// hash, and the reasons they give.
//
// Thread safety: a ProofIndex is read-only once built.
#pragma once

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/node.hpp>

#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace mpt {

// The nodes of a proof by keccak256. The views point into the caller's vector, which must
// outlive the index.
class ProofIndex {
public:
    // The nodes are hashed together on the SIMD lanes (keccak256_each).
    explicit ProofIndex(const std::vector<bytes>& proof) {
        nodes_.reserve(proof.size());
        keccak256_each(
            proof.size(), [&](size_t i) { return bytes_view(proof[i]); },
            [&](size_t i, const Hash256& h) { nodes_.emplace(h, bytes_view(proof[i])); });
    }
    // nullptr when no listed node hashes to h.
    const bytes_view* find(const Hash256& h) const {
        const auto it = nodes_.find(h);
        return it == nodes_.end() ? nullptr : &it->second;
    }

private:
    std::unordered_map<Hash256, bytes_view, Hash256Hasher> nodes_;
};

inline Error invalid(std::string reason) { return Error{Errc::invalid_proof, std::move(reason)}; }

// Depth is in nibbles; only the root stands at depth 0.
inline std::string missing_reason(const Hash256& h, size_t depth) {
    if (depth == 0) return "root node missing";
    return "node for hash " + to_hex(h) + " missing at depth " + std::to_string(depth);
}

inline std::string decode_reason(const Error& e, size_t depth) {
    return "node RLP does not decode at depth " + std::to_string(depth) + ": " + e.message();
}

}  // namespace mpt
