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

// The bytes of a document as they are read (stream_state_document's input).
class StateTextStream {
public:
    // Reads the descriptor fd (closed at the end unless it is standard input) of the file
    // path. from_pipe: the text ends at its first byte no JSON text holds.
    StateTextStream(int fd, std::string path, std::string prefix, size_t piece_bytes,
                    size_t max_entry_bytes, bool from_pipe);
    StateTextStream(const StateTextStream&) = delete;
    StateTextStream& operator=(const StateTextStream&) = delete;
    ~StateTextStream();

    // Reads until the buffer holds want bytes or the text ends.
    Status fill(size_t want);
    // Reading more than max bytes is Errc::input_too_large (0: no limit).
    void limit_input(uint64_t max) noexcept { max_input_ = max; }
    bool eof() const noexcept { return eof_; }

    const std::string& path() const noexcept { return path_; }
    std::string& buf() noexcept { return buf_; }
    size_t piece_bytes() const noexcept { return piece_bytes_; }
    size_t max_entry_bytes() const noexcept { return max_entry_bytes_; }

private:
    int fd_;
    std::string path_;
    std::string buf_;
    size_t piece_bytes_;
    size_t max_entry_bytes_;
    bool from_pipe_;
    uint64_t max_input_ = 0;  // limit_input
    uint64_t read_ = 0;       // bytes read
    bool eof_ = false;
};

// A state document opened for reading once: whole in memory (as load_input gives it) when it
// is at most whole_limit bytes, else as a stream read in pieces of about piece_bytes. A
// regular file larger than whole_limit is read, not mapped.
struct StateSource {
    InputText whole;
    std::unique_ptr<StateTextStream> stream;  // null when whole
    StateSource();
    StateSource(StateSource&&) noexcept;
    StateSource& operator=(StateSource&&) noexcept;
    ~StateSource();
};
// max_input as open_text's (0: none).
Result<StateSource> open_state_source(const std::string& path, size_t whole_limit,
                                      size_t piece_bytes, size_t max_entry_bytes,
                                      uint64_t max_input = 0);

// Reads the stream of an opened source to its end, handing every account to sink. Errors:
// those of parse_state_document, with the same text, named by the source's path in
// Error::file; Errc::input_too_large for an account object past max_entry_bytes; the sink's.
Result<StateStreamResult> stream_state_document(StateTextStream& stream, StateAccountSink& sink);

}  // namespace mpt
