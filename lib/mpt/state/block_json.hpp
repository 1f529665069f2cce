// Blocks, transactions, withdrawals and receipts as JSON: the objects of JSON-RPC answers
// (eth_getBlockByNumber and eth_getBlockByHash with full transactions, eth_getBlockReceipts)
// and the blocks of ethereum/tests' BlockchainTests, encoded as a block body and the receipts
// trie commit to them.
//
// A transaction's encoding (EIP-2718) is its RLP list for a legacy one, type || rlp(fields)
// for a typed one:
//   0x01 (EIP-2930) [chainId, nonce, gasPrice, gas, to, value, input, accessList, yParity, r, s]
//   0x02 (EIP-1559) [chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gas, to, value, input,
//                    accessList, yParity, r, s]
//   0x03 (EIP-4844) as 0x02 with maxFeePerBlobGas and blobVersionedHashes after accessList
//   0x04 (EIP-7702) as 0x02 with authorizationList after accessList, each authorization
//                   [chainId, address, nonce, yParity, r, s]
// and legacy [nonce, gasPrice, gas, to, value, input, v, r, s]. An access list is
// [[address, [storageKey, ...]], ...]; a missing or null "to" (or "", as BlockchainTests write a
// creation) is the empty string. The field names are JSON-RPC's; BlockchainTests' "gasLimit"
// and "data" are read where "gas" and "input" are absent. A typed transaction's parity is
// "yParity", or "v" where that is absent.
// A withdrawal (EIP-4895) is [index, validatorIndex, address, amount]. A receipt is
// type || rlp([status or post-state root, cumulativeGasUsed, logsBloom, logs]) (no type byte
// for a legacy one), the status 0x01 for success and the empty string for failure, each log
// [address, [topic, ...], data].
//
// Quantities are 0x hex (leading zeros allowed), data exact 0x hex. Errors (Errc::bad_input or
// Errc::bad_hex) name the field as a path from the prefix given and its line and column.
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/block.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mpt {

// The encoding of one transaction, withdrawal or receipt object. where names the object in
// errors ("result.transactions[2]").
Result<bytes> encode_transaction_json(const JsonValue& tx, const std::string& where);
Result<bytes> encode_withdrawal_json(const JsonValue& w, const std::string& where);
Result<bytes> encode_receipt_json(const JsonValue& r, const std::string& where);

// The encodings of a list's items: a 0x hex string is an encoding as given
// (debug_getRawReceipts, debug_getRawTransactions); an object is encoded by its shape, a
// receipt when it has "logs", a withdrawal when it has "validatorIndex", a transaction
// otherwise. where names the list in errors ("result.transactions", an item being
// "result.transactions[2]"); where empty, an item is "item 3", counted from 1.
Result<std::vector<bytes>> list_item_encodings(const JsonValue& list, const std::string& where);

// The RLP of a header given as JSON: a JSON-RPC block or header object (eth_getBlockByNumber,
// geth's witness headers) or a BlockchainTests "blockHeader", whose names are read where
// JSON-RPC's are absent (uncleHash, coinbase, transactionsTrie, receiptTrie, bloom). The
// fields from London on (baseFeePerGas, withdrawalsRoot, blobGasUsed, excessBlobGas,
// parentBeaconBlockRoot, requestsHash) are written while they are present, in that order; one
// given after one absent is Errc::bad_input. A "hash" member, where given, must be the
// keccak256 of the result (Errc::bad_input naming both hashes).
Result<bytes> encode_header_json(const JsonValue& header, const std::string& where);

// A transaction whose "hash" is not the Keccak-256 of the encoding its fields give.
struct TransactionHashMismatch {
    size_t index = 0;  // from 0
    Hash256 claimed{};
    Hash256 computed{};
};

struct JsonBlockRoots {
    BlockRoots roots;
    // The first transaction whose fields do not give its hash, where the block gives hashes.
    std::optional<TransactionHashMismatch> suspect;
};

// The roots of a block given as JSON: an eth_getBlockByNumber result (the header's
// transactionsRoot, withdrawalsRoot and receiptsRoot beside "transactions" and "withdrawals")
// or a BlockchainTests block ("blockHeader" with transactionsTrie, withdrawalsRoot and
// receiptTrie). Transactions given as hashes alone (the answer to a request without full
// transactions) are Errc::bad_input. A withdrawals list without a header root, or the other
// way round, is a mismatch (BlockRoots::withdrawals_match()), as in a block's RLP.
Result<JsonBlockRoots> json_block_roots(const JsonValue& block, const std::string& where);

}  // namespace mpt
