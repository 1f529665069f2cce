#include <mpt/ops/limits.hpp>

#include <string>

namespace mpt {

Status check_entry_limits(const KvInput& input, bool hashed_keys, uint64_t max_row) {
    const uint64_t room = max_row > kRowOverhead ? max_row - kRowOverhead : 0;
    for (size_t i = 0; i < input.size(); ++i) {
        const KvPair p = input[i];
        const uint64_t key = hashed_keys ? 32 : p.key.size();
        const uint64_t value = p.value.size();
        // The path holds two bytes per key byte, the packed path in the RLP one more.
        if (3 * key + value <= room) continue;
        const std::string where = "entry " + std::to_string(i + 1) + ": ";
        const std::string limit = " exceeds the limit of " + std::to_string(max_row) +
                                  " bytes a row of the trie file can hold";
        if (3 * key > room / 2) {
            return {Errc::input_too_large, where + "key of " + std::to_string(p.key.size()) +
                                               " bytes" + limit +
                                               " (the key is stored three times over)"};
        }
        return {Errc::input_too_large,
                where + "value of " + std::to_string(value) + " bytes" + limit + " with its key"};
    }
    return {};
}

}  // namespace mpt
