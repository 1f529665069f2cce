// mpt slot: the storage slot of a Solidity mapping's entry or a dynamic array's element, for
// get --slot and proof --slot.
#include <fmt/core.h>

#include <mpt/core/hex.hpp>
#include <mpt/state/slot.hpp>

#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"

namespace mpt::cli {
namespace {

struct SlotOptions {
    std::string position;
    std::vector<std::string> keys;  // TYPE:VALUE, outer mapping first
    std::string index;              // empty: no array element
    uint64_t element_slots = 1;
    bool json = false;
};

int run_slot(const SlotOptions& o) {
    auto slot = parse_u256(o.position);
    if (!slot) return report_usage("slot: POSITION: " + slot.error().detail);
    for (const std::string& k : o.keys) {
        auto key = encode_mapping_key(k);
        if (!key) return report_usage("slot: --key: " + key.error().detail);
        *slot = mapping_slot(*key, *slot);
    }
    if (!o.index.empty()) {
        auto index = parse_u256(o.index);
        if (!index) return report_usage("slot: --index: " + index.error().detail);
        *slot = array_element_slot(*slot, *index, o.element_slots);
    }
    if (o.json) {
        fmt::print("{{\"slot\":\"{}\"}}\n", to_hex(*slot));
    } else {
        fmt::print("{}\n", to_hex(*slot));
    }
    return kOk;
}

}  // namespace

void register_slot(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<SlotOptions>();
    sub->add_option("position", o->position,
                    "The variable's slot, as the storage layout gives it (decimal, or 0x hex)")
        ->required();
    sub->add_option("--key", o->keys,
                    "A mapping's key, TYPE:VALUE (address:0x.., uint256:5, int8:-1, bool:true, "
                    "bytes32:0x.., string:text, bytes:0x..); again for a mapping in a mapping, "
                    "outer first");
    sub->add_option("--index", o->index,
                    "Then the element of the dynamic array there (decimal, or 0x hex)");
    sub->add_option("--element-slots", o->element_slots,
                    "Slots each array element takes (a struct of 3 words: 3)")
        ->capture_default_str()
        ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
    sub->add_flag("--json", o->json, "Print {\"slot\"}");
    sub->footer(
        "Prints the 32-byte slot: for each --key, keccak256(key . slot) (a value key padded to\n"
        "32 bytes, a string or bytes key as its bytes); then, with --index I, keccak256(slot) +\n"
        "I * --element-slots. The slot goes to get --slot and proof --slot as it is printed\n"
        "(those read every slot as hex; this reads POSITION and --index as decimal unless 0x).");
    sub->final_callback([o, &runner] { runner = [o] { return run_slot(*o); }; });
}

}  // namespace mpt::cli
