// The journal's record format: round trip of any bytes, torn and damaged lines detected.
#include "common/journal_format.hpp"

#include <gtest/gtest.h>
#include <string>

using namespace iosig::preload;

namespace {

std::string record(RecordType type, std::initializer_list<std::string_view> fields,
                   std::string_view run = "run-1") {
    std::string buffer(8192, '\0');
    RecordWriter writer(buffer.data(), buffer.size());
    writer.begin(type, 1234567890123, 42, run);
    for (auto f : fields)
        writer.field(f);
    EXPECT_TRUE(writer.finish());
    return std::string(writer.text());
}

TEST(JournalFormat, RoundTripsArbitraryBytes) {
    const std::string odd =
        std::string("tab\there, newline\nthere, percent % and \x01\x7f bytes ") + "\xc3\xa9";
    const auto text = record(RecordType::redirect, {"/staged/a", odd, ""});
    ASSERT_EQ(text.back(), '\n');
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
    const auto parsed = parse_record(std::string_view(text).substr(0, text.size() - 1));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->type, RecordType::redirect);
    EXPECT_EQ(parsed->time_ns, 1234567890123);
    EXPECT_EQ(parsed->pid, 42);
    EXPECT_EQ(parsed->run, "run-1");
    ASSERT_EQ(parsed->fields.size(), 3U);
    EXPECT_EQ(parsed->fields[1], odd);
    EXPECT_EQ(parsed->fields[2], "");
}

TEST(JournalFormat, TornTailAndFlippedBytesAreIgnored) {
    const auto a = record(RecordType::redirect, {"/s/1", "/o/1"});
    const auto b = record(RecordType::moved, {"/s/1", "/o/2"});
    auto damaged = record(RecordType::deleted, {"/s/1"});
    damaged[10] ^= 1;
    const auto torn = record(RecordType::deleted, {"/s/9"}).substr(0, 20);
    const auto contents = parse_journal(a + damaged + b + torn);
    ASSERT_EQ(contents.records.size(), 2U);
    EXPECT_EQ(contents.records[0].type, RecordType::redirect);
    EXPECT_EQ(contents.records[1].type, RecordType::moved);
    EXPECT_EQ(contents.damaged_lines, 2U);
}

TEST(JournalFormat, OverflowIsReportedNotTruncatedSilently) {
    char small[40];
    RecordWriter writer(small, sizeof small);
    writer.begin(RecordType::redirect, 1, 1, "run");
    writer.field(std::string(100, 'x'));
    EXPECT_FALSE(writer.finish());
}

} // namespace
