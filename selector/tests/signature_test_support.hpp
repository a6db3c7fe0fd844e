// Shared helpers for the signature specifications (signature_*_test.cpp).
#pragma once

#include "iosig/signature.hpp"

#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <string_view>

namespace iosig::testing {

// Parses `text` as parameters and expects success.
inline Signature parse_ok(std::string_view text) {
    const auto parsed = parse_signature(text);
    std::string details;
    for (const auto& error : parsed.errors)
        details += render_sig_error(text, error);
    EXPECT_TRUE(parsed.value.has_value()) << "'" << text << "' was rejected:\n" << details;
    return parsed.value.value_or(Signature{});
}

// What an error must look like: where it points, what it says, what it offers.
struct Expected {
    std::string_view located;         // the text the error's [offset, offset+length) covers
    std::size_t offset;               // where it starts
    std::string_view says;            // a part of the message
    std::optional<std::string> fix{}; // the replacement, or none
};

inline void expect_error(std::string_view text, const SigError& error, const Expected& expected) {
    SCOPED_TRACE(render_sig_error(text, error));
    EXPECT_EQ(error.offset, expected.offset);
    ASSERT_LE(error.offset + error.length, text.size());
    EXPECT_EQ(text.substr(error.offset, error.length), expected.located);
    EXPECT_NE(error.message.find(expected.says), std::string::npos) << error.message;
    EXPECT_EQ(error.replacement, expected.fix);
}

// Parses `text` as parameters and expects exactly one error.
inline SigError single_error(std::string_view text, const Expected& expected) {
    const auto parsed = parse_signature(text);
    EXPECT_FALSE(parsed.value.has_value()) << "'" << text << "' was accepted";
    std::string all;
    for (const auto& error : parsed.errors)
        all += render_sig_error(text, error);
    EXPECT_EQ(parsed.errors.size(), 1u) << "for '" << text << "':\n" << all;
    if (parsed.errors.empty()) return {};
    expect_error(text, parsed.errors.front(), expected);
    return parsed.errors.front();
}

} // namespace iosig::testing
