// The dirty parts of a line (dirty_parts.hpp): kept in order, disjoint and apart; a write that
// overlaps or touches parts merges with them; past the cap the two closest parts merge.
#include "engine/dirty_parts.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace iosig::tier::detail {
namespace {

std::vector<ByteRange> after(std::vector<ByteRange> parts, ByteRange added,
                             std::size_t most = most_dirty_parts) {
    add_dirty_part(parts, added, most);
    return parts;
}

TEST(DirtyParts, ASeparateWriteIsAPartOfItsOwnInOrder) {
    EXPECT_EQ(after({{100, 200}}, {300, 400}), (std::vector<ByteRange>{{100, 200}, {300, 400}}));
    EXPECT_EQ(after({{300, 400}}, {100, 200}), (std::vector<ByteRange>{{100, 200}, {300, 400}}));
    EXPECT_EQ(after({{0, 10}, {300, 400}}, {100, 200}),
              (std::vector<ByteRange>{{0, 10}, {100, 200}, {300, 400}}));
}

TEST(DirtyParts, AWriteThatOverlapsOrTouchesPartsMergesWithThem) {
    EXPECT_EQ(after({{100, 200}}, {150, 250}), (std::vector<ByteRange>{{100, 250}}));
    EXPECT_EQ(after({{100, 200}}, {200, 300}), (std::vector<ByteRange>{{100, 300}}));
    EXPECT_EQ(after({{100, 200}}, {50, 100}), (std::vector<ByteRange>{{50, 200}}));
    EXPECT_EQ(after({{0, 10}, {20, 30}, {40, 50}, {90, 99}}, {5, 45}),
              (std::vector<ByteRange>{{0, 50}, {90, 99}}));
    EXPECT_EQ(after({{0, 10}, {20, 30}}, {12, 18}),
              (std::vector<ByteRange>{{0, 10}, {12, 18}, {20, 30}}));
}

TEST(DirtyParts, PastTheCapTheTwoClosestPartsMerge) {
    EXPECT_EQ(after({{0, 10}, {100, 110}, {200, 210}}, {115, 120}, 3),
              (std::vector<ByteRange>{{0, 10}, {100, 120}, {200, 210}}));
    EXPECT_EQ(after({{0, 10}, {12, 20}}, {100, 110}, 2),
              (std::vector<ByteRange>{{0, 20}, {100, 110}}));
}

} // namespace
} // namespace iosig::tier::detail
