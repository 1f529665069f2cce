// The fields of a JSON document read by name, each error naming the field as a path from
// the document's top ("result.storageProof[0].key") and the line and column of its value.
// The readers of eth_getProof answers and of blocks and receipts share it.
//
// Thread safety: a value type; one reader per thread.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/account.hpp>

#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace mpt {

// "0x" or "0X" first.
bool has_hex_prefix(std::string_view s) noexcept;

class JsonFields {
public:
    explicit JsonFields(std::string prefix) : prefix_(std::move(prefix)) {}

    // An error of the value v of field (a path below the prefix).
    Error fail(const JsonValue& v, const std::string& field, Errc code,
               const std::string& why) const;

    // The member called name of obj; an error naming field when it is missing.
    Result<JsonValue> member(const JsonValue& obj, std::string_view name,
                             const std::string& field) const;
    Result<std::string_view> string(const JsonValue& obj, std::string_view name,
                                    const std::string& field) const;
    // A 0x hex string's bytes.
    Result<bytes> data(const JsonValue& v, const std::string& field) const;
    // A 0x hex string of exactly N bytes.
    template <size_t N>
    Result<std::array<uint8_t, N>> fixed(const JsonValue& obj, std::string_view name) const {
        const std::string field(name);
        MPT_TRY(const JsonValue v, member(obj, name, field));
        MPT_TRY(const bytes b, data(v, field));
        if (b.size() != N) {
            return fail(
                v, field, Errc::bad_hex,
                "expected " + std::to_string(N) + " bytes, got " + std::to_string(b.size()));
        }
        std::array<uint8_t, N> out;
        std::memcpy(out.data(), b.data(), N);
        return out;
    }
    // A 0x hex quantity of at most max_bytes significant bytes (see parse_quantity).
    Result<U256> quantity(const JsonValue& obj, std::string_view name, const std::string& field,
                          size_t max_bytes) const;
    // An array of 0x hex strings.
    Result<std::vector<bytes>> nodes(const JsonValue& obj, std::string_view name,
                                     const std::string& field) const;

private:
    std::string prefix_;
};

}  // namespace mpt
