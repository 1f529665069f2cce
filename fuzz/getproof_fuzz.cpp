// eth_getProof answers and the JSON tree under them: any text parses or fails with an error,
// never a crash; a text with ASCII only and shallow nesting is JSON here exactly when
// nlohmann/json accepts it (a second, independent parser); every value of a parsed tree can be
// walked; an answer reads or fails with an input error, and one that reads verifies against its own
// root or is refused as an invalid proof, nothing else.
#include <algorithm>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/getproof.hpp>
#include <nlohmann/json.hpp>
#include <vector>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto tree = JsonTree::parse(text);
    // nlohmann/json ends its input at a NUL byte, which RFC 8259 allows nowhere: texts with
    // one are left out of the comparison.
    const bool ascii = std::all_of(text.begin(), text.end(), [](char c) { return c > 0; });
    const bool shallow =
        std::count_if(text.begin(), text.end(), [](char c) { return c == '[' || c == '{'; }) < 200;
    // nlohmann/json also refuses a number beyond a double's range ("2e7946", 400 digits),
    // which RFC 8259 allows: texts with an exponent or a long run of digits are left out too.
    bool huge_number = false;
    size_t digits = 0;
    for (size_t i = 0; i < text.size() && !huge_number; ++i) {
        const char c = text[i];
        digits = c >= '0' && c <= '9' ? digits + 1 : 0;
        huge_number =
            digits >= 300 || ((c == 'e' || c == 'E') && i > 0 &&
                              ((text[i - 1] >= '0' && text[i - 1] <= '9') || text[i - 1] == '.'));
    }
    // An object whose member names differ only in case is JSON refused on purpose, as
    // Errc::bad_input; any other refusal is a syntax error.
    const bool json = tree.ok() || tree.error().code == Errc::bad_input;
    if (ascii && shallow && !huge_number) FUZZ_CHECK(json == nlohmann::json::accept(text));
    if (!tree) {
        FUZZ_CHECK(tree.error().code == Errc::bad_json || tree.error().code == Errc::bad_input);
        FUZZ_CHECK(!tree.error().detail.empty());
        return 0;
    }
    // Every value, without recursion: containers' sizes, names and the last-member lookup.
    std::vector<JsonValue> todo = {tree->root()};
    size_t seen = 0;
    while (!todo.empty()) {
        const JsonValue v = todo.back();
        todo.pop_back();
        ++seen;
        FUZZ_CHECK(!v.where().empty());
        for (size_t i = 0; i < v.size(); ++i) {
            todo.push_back(v[i]);
            if (v.is_object()) FUZZ_CHECK(v.find(v.name(i)).has_value());
        }
        if (!v.is_array() && !v.is_object()) FUZZ_CHECK(v.size() == 0);
    }
    FUZZ_CHECK(seen <= size);
    auto doc = read_get_proof(tree->root());
    if (!doc) {
        const Errc e = doc.error().code;
        FUZZ_CHECK(e == Errc::bad_input || e == Errc::bad_hex);
        return 0;
    }
    auto verdict = verify_get_proof(*doc, self_root(*doc));
    if (!verdict) FUZZ_CHECK(verdict.error().code == Errc::invalid_proof);
    return 0;
}
