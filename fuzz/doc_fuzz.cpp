// Proof documents: any text parses or fails with an error, never a crash; every field read
// succeeds or fails with an error; a text with ASCII only and shallow nesting parses
// exactly when nlohmann/json accepts it (a second, independent parser), except that
// nlohmann/json ends its input at a NUL byte ("[1]\0junk" is accepted there): JSON has no
// raw NUL anywhere (RFC 8259: control characters appear only escaped, in strings), so such
// a text must be bad JSON here. And a number beyond double's range is JSON (RFC 8259 section 6
// leaves the range to implementations): this parser takes it, nlohmann/json refuses it with
// its out_of_range error 406, and that is the one refusal that may differ.
#include <algorithm>
#include <mpt/input/json_doc.hpp>
#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"

namespace {

// Whether nlohmann/json refuses the text for a number out of double's range only.
bool refused_for_range(std::string_view text) {
    try {
        // Kept in a name: GCC warns of a discarded result even through a cast to void.
        [[maybe_unused]] const nlohmann::json parsed = nlohmann::json::parse(text);
    } catch (const nlohmann::json::out_of_range& e) {
        return e.id == 406;
    } catch (const nlohmann::json::exception&) {
        return false;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto doc = JsonDoc::parse(text);
    const bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return c >= 0; });
    const bool shallow =
        std::count_if(text.begin(), text.end(), [](char c) { return c == '[' || c == '{'; }) < 200;
    const bool ours = doc.ok() || doc.error().code == Errc::bad_input;
    if (text.find('\0') != std::string_view::npos) {
        FUZZ_CHECK(!ours);
    } else if (ascii && shallow && ours != nlohmann::json::accept(text)) {
        FUZZ_CHECK(ours && refused_for_range(text));
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
