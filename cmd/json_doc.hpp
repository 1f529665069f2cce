// The JSON documents that proof commands read: one object, fields of hex strings.
//
// Every error is Errc::bad_json, bad_input or bad_hex (exit 2) and names the field.
#pragma once

#include <mpt/bytes.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace mpt::cli {

// Parses text as one JSON object. A syntax error names the byte offset.
Result<nlohmann::json> parse_json_object(std::string_view text);

// A required field holding a hex string.
Result<bytes> hex_field(const nlohmann::json& doc, const char* name);
// A required field holding a 32-byte hex string.
Result<Hash256> hash_field(const nlohmann::json& doc, const char* name);
// A required field holding a hex string or null (nullopt).
Result<std::optional<bytes>> nullable_hex_field(const nlohmann::json& doc, const char* name);
// A required field holding an array of hex strings.
Result<std::vector<bytes>> hex_array_field(const nlohmann::json& doc, const char* name);
// Like hex_array_field, but a missing or null field is nullopt.
Result<std::optional<std::vector<bytes>>> optional_hex_array_field(const nlohmann::json& doc,
                                                                   const char* name);

}  // namespace mpt::cli
