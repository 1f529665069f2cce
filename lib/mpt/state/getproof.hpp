// eth_getProof results (EIP-1186) and their verification against a state root.
//
// A result is {"address", "accountProof", "balance", "codeHash", "nonce", "storageHash",
// "storageProof": [{"key", "value", "proof"}, ...]}, alone or as the "result" of a JSON-RPC
// response. The encodings, as go-ethereum's internal/ethapi writes them (AccountResult,
// StorageResult) and other clients send them:
// - address 20 bytes, codeHash and storageHash 32 bytes, proof nodes any length: hex DATA
//   with 0x;
// - nonce (at most 64 bits), balance and each storage value (at most 256 bits): QUANTITY,
//   0x and hex digits. The spec's form has no leading zeros ("0x0", "0x76"); leading zeros
//   are accepted, as some clients send values as padded words;
// - a storage key as the caller asked for it: go-ethereum echoes a 32-byte key as it is and
//   any other as a QUANTITY ("0x00" asked, "0x0" answered). Its value is the slot: at most
//   64 hex digits (0x optional, an odd count allowed), left-padded to a 32-byte word.
// The account proof is the proof of keccak256(address) in the state trie; each storage proof
// that of keccak256(slot word) in the account's storage trie (account.hpp).
//
// An account the state lacks is answered with nonce 0, balance 0 and an account proof of
// absence. Its codeHash and storageHash are keccak256("") and the empty root, or, from
// go-ethereum 1.13.4 on (and erigon), 32 zero bytes each; its storage proofs have value 0
// (and go-ethereum gives them no nodes).
//
// Thread safety: value types and pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/account.hpp>

#include <string>
#include <vector>

namespace mpt {

struct StorageProofClaim {
    std::string key;  // as the document writes it
    U256 slot{};      // the slot as a 32-byte word
    U256 value{};     // zero: the slot is claimed empty
    std::vector<bytes> proof;
};

struct GetProofDoc {
    Address address{};
    Account account;  // nonce, balance, storageHash (storage_root) and codeHash as claimed
    std::vector<bytes> account_proof;
    std::vector<StorageProofClaim> storage;
};

// True when v is an object with an "accountProof" member, or with a "result" or "error"
// member (a JSON-RPC response): the documents read_get_proof reads.
bool looks_like_get_proof(const JsonValue& v) noexcept;

// Reads a result, or the result of a JSON-RPC response. Errc::bad_input for a response that
// carries an error or a null result, a missing field or one of the wrong type; Errc::bad_hex
// for bad hex or a number too large. Errors name the field (result.storageProof[1].value)
// and its line and column.
Result<GetProofDoc> read_get_proof(const JsonValue& v);

// The root a document proves itself against, trusting nothing: keccak256 of its first
// account proof node (the root node), or the empty root when the proof has no node.
Hash256 self_root(const GetProofDoc& doc) noexcept;

struct GetProofVerdict {
    bool account_exists = false;  // the account proof proves the account present
};

// Checks doc against the state root: the account proof must prove the claimed account (or
// its absence, for an absent account's answer), and each storage proof its value under the
// proven storage root (absence for a zero value). A failure is Errc::invalid_proof naming
// the part, "account proof: <why>" or "storage proof <i> (key <key>): <why>", where why is
// verify_proof's or check_proof_claim's reason or the fields that differ.
Result<GetProofVerdict> verify_get_proof(const GetProofDoc& doc, const Hash256& root);

// A JSON-RPC QUANTITY of at most max_bytes bytes (1 to 32), big-endian in a 32-byte word:
// 0x (or 0X) and at least one hex digit; leading zeros accepted. Errc::bad_hex otherwise.
Result<U256> parse_quantity(std::string_view text, size_t max_bytes = 32);

// A storage key as eth_getProof takes it (see above), as the 32-byte slot word.
Result<U256> parse_storage_key(std::string_view text);

// A storage key asked for, as go-ethereum's eth_getProof reads and echoes it: 0x (or 0X)
// optional, then at most 32 bytes of hex digits, leading zeros counted, an odd count taken
// as if a 0 led it, none at all the slot 0. The echo is "0x" and the 64 lowercase digits
// when exactly 32 bytes were given, else the slot as a QUANTITY ("0x0dEadbeef" and
// "0x000deadbeef" give "0xdeadbeef", "0x" gives "0x0"). Errc::bad_hex for a non-hex digit
// or more than 32 bytes.
struct StorageKeyArg {
    U256 slot{};
    std::string echo;
};
Result<StorageKeyArg> parse_get_proof_key(std::string_view text);

// Appends doc as go-ethereum writes an eth_getProof result, byte for byte: {"address",
// "accountProof", "balance", "codeHash", "nonce", "storageHash", "storageProof": [{"key",
// "value", "proof"}]} in that order, no spaces, hex in lowercase, address and hashes as DATA
// (0x and every digit), nonce, balance and values as QUANTITY, each key as its StorageKeyArg
// echo, empty lists as []. No newline. REQUIRES: every key is hex text (no JSON escaping is
// done).
void append_get_proof_json(std::string& out, const GetProofDoc& doc);

}  // namespace mpt
