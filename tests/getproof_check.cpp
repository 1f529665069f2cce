// Checks the eth_getProof responses of a real client against our proof verifier.
//
// Usage: mpt_getproof_check DIR, where DIR is execution-apis' tests/eth_getProof folder. Each
// .io file holds a ">> " request line and a "<< " response line (JSON-RPC). For each response:
// - the account proof, under keccak256(address), must prove RLP([nonce, balance, storageHash,
//   codeHash]) against the state root. The response carries no state root; the first proof
//   node is the root node, so the root is its keccak256;
// - each storage proof, under keccak256(slot as 32 bytes), must prove RLP(value) against
//   storageHash, or absence when the value is zero;
// - the same claims with the balance (and each storage value) changed must fail.
// Prints one line per file and "N passed, M failed". Exit 0 when all pass, 1 when any fails,
// 2 when DIR is missing, unreadable or holds no .io file.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/proof/proof.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace mpt;
using nlohmann::json;

// A failed check, with what and where.
struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const std::string& string_at(const json& obj, const char* name) {
    const auto it = obj.find(name);
    if (it == obj.end() || !it->is_string()) {
        throw Failure(std::string("field \"") + name + "\" missing or not a string");
    }
    return it->get_ref<const std::string&>();
}

bytes data_hex(const std::string& s, const std::string& what) {
    if (s.rfind("0x", 0) != 0) throw Failure(what + ": missing 0x prefix");
    auto b = from_hex(s);
    if (!b) throw Failure(what + ": " + b.error().message());
    return std::move(b).value();
}

// A JSON-RPC quantity ("0x0", "0x76"): its value as minimal big-endian bytes, zero as the
// empty string (the RLP rule for integers).
bytes quantity(const std::string& s, const std::string& what) {
    if (s.rfind("0x", 0) != 0 || s.size() == 2) throw Failure(what + ": not a quantity");
    std::string digits = s.substr(2);
    if (digits.size() % 2 != 0) digits.insert(digits.begin(), '0');
    bytes b = data_hex("0x" + digits, what);
    b.erase(b.begin(), std::find_if(b.begin(), b.end(), [](uint8_t x) { return x != 0; }));
    return b;
}

// A storage slot as the 32-byte word the trie hashes: the key as a number, left-padded.
bytes slot_word(const std::string& s) {
    const bytes v = quantity(s, "storage key " + s);
    if (v.size() > 32) throw Failure("storage key " + s + " longer than 32 bytes");
    bytes word(32 - v.size(), 0);
    word.insert(word.end(), v.begin(), v.end());
    return word;
}

std::vector<bytes> proof_nodes(const json& list, const std::string& what) {
    if (!list.is_array()) throw Failure(what + ": proof is not an array");
    std::vector<bytes> out;
    for (const auto& n : list) {
        if (!n.is_string()) throw Failure(what + ": proof item is not a string");
        out.push_back(data_hex(n.get<std::string>(), what + " proof node"));
    }
    return out;
}

bytes account_rlp(const bytes& nonce, const bytes& balance, const bytes& storage_hash,
                  const bytes& code_hash) {
    bytes out;
    const size_t mark = rlp::begin_list(out);
    rlp::append_string(out, nonce);
    rlp::append_string(out, balance);
    rlp::append_string(out, storage_hash);
    rlp::append_string(out, code_hash);
    rlp::end_list(out, mark);
    return out;
}

// value + 1 as minimal big-endian bytes.
bytes plus_one(bytes v) {
    for (size_t i = v.size(); i-- > 0;) {
        if (++v[i] != 0) return v;
    }
    v.insert(v.begin(), 1);
    return v;
}

void expect_valid(const Hash256& root, const Hash256& key, const std::optional<bytes>& claim,
                  const std::vector<bytes>& proof, const std::string& what) {
    const Status s = check_proof_claim(root, key, claim, proof);
    if (!s.ok()) throw Failure(what + ": " + s.error().message());
}

void expect_invalid(const Hash256& root, const Hash256& key, const std::optional<bytes>& claim,
                    const std::vector<bytes>& proof, const std::string& what) {
    if (check_proof_claim(root, key, claim, proof).ok()) {
        throw Failure(what + ": an altered claim still verifies");
    }
}

// Checks one .io file; returns a summary of what it proved.
std::string check_file(const std::filesystem::path& path) {
    auto text = read_file(path.string());
    if (!text) throw Failure(text.error().message());
    std::string request_line, response_line;
    size_t start = 0;
    while (start < text->size()) {
        size_t end = text->find('\n', start);
        if (end == std::string::npos) end = text->size();
        const std::string line = text->substr(start, end - start);
        if (line.rfind(">>", 0) == 0) request_line = line.substr(2);
        if (line.rfind("<<", 0) == 0) response_line = line.substr(2);
        start = end + 1;
    }
    if (request_line.empty() || response_line.empty()) {
        throw Failure("no \">>\" request and \"<<\" response lines");
    }
    const json request = json::parse(request_line, nullptr, false);
    const json response = json::parse(response_line, nullptr, false);
    if (request.is_discarded() || response.is_discarded()) throw Failure("malformed JSON line");
    if (!response.contains("result") || !response["result"].is_object()) {
        throw Failure("the response has no result object");
    }
    const json& r = response["result"];

    const bytes address = data_hex(string_at(r, "address"), "address");
    if (address.size() != 20) throw Failure("address is not 20 bytes");
    if (request.contains("params") && request["params"].is_array() && !request["params"].empty() &&
        request["params"][0].is_string()) {
        const bytes asked = data_hex(request["params"][0].get<std::string>(), "request address");
        if (asked != address) throw Failure("the response is for another address");
    }
    if (!r.contains("accountProof")) throw Failure("field \"accountProof\" missing");
    const std::vector<bytes> account_proof = proof_nodes(r["accountProof"], "accountProof");
    if (account_proof.empty()) throw Failure("empty accountProof");
    // The response carries no state root: the first node of the proof is the root node.
    const Hash256 state_root = keccak256(account_proof[0]);

    const bytes nonce = quantity(string_at(r, "nonce"), "nonce");
    const bytes balance = quantity(string_at(r, "balance"), "balance");
    const bytes storage_hash = data_hex(string_at(r, "storageHash"), "storageHash");
    const bytes code_hash = data_hex(string_at(r, "codeHash"), "codeHash");
    if (storage_hash.size() != 32 || code_hash.size() != 32) {
        throw Failure("storageHash or codeHash is not 32 bytes");
    }
    const Hash256 account_key = keccak256(address);
    expect_valid(state_root, account_key, account_rlp(nonce, balance, storage_hash, code_hash),
                 account_proof, "account " + to_hex(address));
    expect_invalid(state_root, account_key,
                   account_rlp(nonce, plus_one(balance), storage_hash, code_hash), account_proof,
                   "account with balance + 1");

    Hash256 storage_root;
    std::copy(storage_hash.begin(), storage_hash.end(), storage_root.begin());
    if (!r.contains("storageProof") || !r["storageProof"].is_array()) {
        throw Failure("storageProof missing or not an array");
    }
    const json& slots = r["storageProof"];
    size_t asked_slots = 0;
    if (request.contains("params") && request["params"].size() > 1 &&
        request["params"][1].is_array()) {
        asked_slots = request["params"][1].size();
    }
    if (slots.size() != asked_slots) {
        throw Failure("asked for " + std::to_string(asked_slots) + " slots, got " +
                      std::to_string(slots.size()));
    }
    for (const json& sp : slots) {
        const std::string& key = string_at(sp, "key");
        const std::string what = "storage slot " + key;
        const bytes value = quantity(string_at(sp, "value"), what + " value");
        if (!sp.contains("proof")) throw Failure(what + ": field \"proof\" missing");
        const std::vector<bytes> proof = proof_nodes(sp["proof"], what);
        const Hash256 slot_key = keccak256(slot_word(key));
        std::optional<bytes> claim;
        if (!value.empty()) {
            bytes enc;
            rlp::append_string(enc, value);
            claim = enc;
        }
        expect_valid(storage_root, slot_key, claim, proof, what);
        bytes altered;
        rlp::append_string(altered, plus_one(value));
        expect_invalid(storage_root, slot_key, altered, proof, what + " with value + 1");
    }
    return "account " + to_hex(address) + " under root " + to_hex(state_root) + ", " +
           std::to_string(slots.size()) + " storage slot(s)";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: mpt_getproof_check EXECUTION_APIS_TESTS/eth_getProof\n");
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() == ".io") files.push_back(it->path());
    }
    if (ec) {
        std::fprintf(stderr, "mpt_getproof_check: %s: %s\n", argv[1], ec.message().c_str());
        return 2;
    }
    if (files.empty()) {
        std::fprintf(stderr, "mpt_getproof_check: %s: no .io files\n", argv[1]);
        return 2;
    }
    std::sort(files.begin(), files.end());
    size_t passed = 0, failed = 0;
    for (const auto& f : files) {
        try {
            const std::string summary = check_file(f);
            std::printf("ok   %s: %s\n", f.filename().c_str(), summary.c_str());
            ++passed;
        } catch (const std::exception& e) {
            std::printf("FAIL %s: %s\n", f.filename().c_str(), e.what());
            ++failed;
        }
    }
    std::printf("%zu passed, %zu failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
