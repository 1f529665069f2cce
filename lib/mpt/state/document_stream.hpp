// State documents larger than memory (document.hpp's shapes), read once, front to back, an
// account at a time: each account object is parsed as read_state_document parses it, with the
// same checks and the same errors, placed by line and column in the whole document, and handed
// to a sink with its hashes filled and its storage sorted by key with no key twice. What
// read_state_document does over the whole document afterwards is left to the sink: an
// address given twice is handed over twice (the last one is the account), and the accounts of
// an "alloc" or "accounts" member that a later member of that name replaces are handed over
// too, below StateStreamResult::first_live.
//
// Only one account is held at a time (with its code and storage): one account object may take
// up to max_entry_bytes of text, past which reading stops with Errc::input_too_large.
//
// Thread safety: an object is used by one thread at a time.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/text_stream.hpp>
#include <mpt/state/account.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace mpt {

// What a streaming read hands each account to.
class StateAccountSink {
public:
    virtual ~StateAccountSink() = default;
    // a: an account as read_state_document gives it (code hash set, storage sorted by key,
    // each key once, zero values kept). instance: the account's number in the document, from
    // 0, in the order read. An error stops the reading and is returned.
    virtual Status account(const StateAccount& a, uint64_t instance) = 0;
};

struct StateStreamResult {
    StateShape shape = StateShape::alloc;
    std::optional<Hash256> claimed_root;
    uint64_t accounts = 0;  // account objects handed over
    // Accounts handed over with a lower instance were in an "alloc" or "accounts" member
    // that a later one replaced (a repeated key keeps its last value): not in the state.
    uint64_t first_live = 0;
};

// Reads the stream of an opened source (open_text_source) to its end, handing every account
// to sink. Errors: those of parse_state_document, with the same text, named by the source's
// path in Error::file; Errc::input_too_large for an account object past max_entry_bytes; the
// sink's.
Result<StateStreamResult> stream_state_document(TextStream& stream, StateAccountSink& sink);

}  // namespace mpt
