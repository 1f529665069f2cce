// Single-key proof verification on arbitrary proofs: never crashes or hangs; the answer is
// deterministic and check_proof_claim agrees with it. The input is a key (a length byte,
// then the key), then nodes, each a two-byte big-endian length and the node's bytes; the
// root is the hash of the first node, so the walk goes past the root more often.
#include <mpt/proof/proof.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    if (size < 1) return 0;
    size_t klen = data[0] % 40;
    if (1 + klen > size) return 0;
    const bytes key(data + 1, data + 1 + klen);
    std::vector<bytes> proof;
    for (size_t at = 1 + klen; at + 2 <= size;) {
        const size_t n = static_cast<size_t>(data[at] << 8 | data[at + 1]);
        at += 2;
        const size_t take = n < size - at ? n : size - at;
        proof.emplace_back(data + at, data + at + take);
        at += take;
    }
    const Hash256 root = proof.empty() ? kEmptyRoot : keccak256(proof.front());
    auto a = verify_proof(root, key, proof);
    auto b = verify_proof(root, key, proof);
    FUZZ_CHECK(a.ok() == b.ok());
    if (!a.ok()) {
        FUZZ_CHECK(a.error().code == Errc::invalid_proof);
        return 0;
    }
    FUZZ_CHECK(*a == *b);
    // A proven value is a nonempty byte string; the claim of it checks, the opposite fails.
    if (*a) FUZZ_CHECK(!(*a)->empty());
    FUZZ_CHECK(check_proof_claim(root, key, *a, proof).ok());
    const std::optional<bytes> other = *a ? std::nullopt : std::optional<bytes>(bytes{0x01});
    FUZZ_CHECK(!check_proof_claim(root, key, other, proof).ok());
    return 0;
}
