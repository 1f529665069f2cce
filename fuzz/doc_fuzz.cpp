// Proof documents: any text parses or fails with an error, never a crash; every field read
// succeeds or fails with an error; a text with ASCII only and shallow nesting parses
// exactly when nlohmann/json accepts it (a second, independent parser).
#include <algorithm>
#include <mpt/input/json_doc.hpp>
#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto doc = JsonDoc::parse(text);
    const bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return c >= 0; });
    const bool shallow =
        std::count_if(text.begin(), text.end(), [](char c) { return c == '[' || c == '{'; }) < 200;
    if (ascii && shallow) {
        const bool ours = doc.ok() || doc.error().code == Errc::bad_input;
        FUZZ_CHECK(ours == nlohmann::json::accept(text));
    }
    if (!doc) {
        const Errc e = doc.error().code;
        FUZZ_CHECK(e == Errc::bad_json || e == Errc::bad_input);
        FUZZ_CHECK(!doc.error().detail.empty());
        return 0;
    }
    for (const char* name : {"root", "key", "value", "proof", "first", "keys", "values"}) {
        static_cast<void>(doc->hex(name));
        static_cast<void>(doc->hash(name));
        static_cast<void>(doc->nullable_hex(name));
        static_cast<void>(doc->hex_array(name));
        static_cast<void>(doc->optional_hex_array(name));
    }
    return 0;
}
