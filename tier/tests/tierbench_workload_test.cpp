// iosig-tierbench's requests (tier/tools/tierbench_workload.hpp): a trace's lines laid out on a
// compact home file in address order, and the synthetic patterns.
#include "tierbench_workload.hpp"
#include "trace_fixture.hpp"

#include <gtest/gtest.h>
#include <stdexcept>

namespace iosig::tier::bench {
namespace {

Trace block_trace(std::initializer_list<Request> requests) {
    return test_support::hand_made_trace(TraceKind::blocks, requests);
}

constexpr std::uint64_t line = 4096;

TEST(TraceWorkload, LinesKeepTheirOrderByAddressWithTheGapsRemoved) {
    const Trace t = block_trace({{1000 * line + 100, 512, true},
                                 {5 * line, 8192, false}, // lines 5 and 6
                                 {1000 * line, 4096, false},
                                 {7 * line, 4096, false}});
    const Workload w = trace_workload(t, line, 100);
    // Lines 5, 6, 7 and 1000 become 0, 1, 2 and 3.
    EXPECT_EQ(w.file_size, 4 * line);
    ASSERT_EQ(w.ops.size(), 4u);
    EXPECT_EQ(w.ops[0].offset, static_cast<off_t>(3 * line + 100)) << "offset inside the line kept";
    EXPECT_EQ(w.ops[0].size, 512u);
    EXPECT_TRUE(w.ops[0].write);
    EXPECT_EQ(w.ops[1].offset, 0);
    EXPECT_EQ(w.ops[1].size, 8192u) << "a request over two lines still covers both";
    EXPECT_EQ(w.ops[2].offset, static_cast<off_t>(3 * line));
    EXPECT_EQ(w.ops[3].offset, static_cast<off_t>(2 * line));
    EXPECT_EQ(w.reads, 3u);
    EXPECT_EQ(w.writes, 1u);
    EXPECT_EQ(w.largest_op, 8192u);
    EXPECT_FALSE(w.sequential);
}

TEST(TraceWorkload, OnlyTheFirstRequestsAreReplayed) {
    const Trace t = block_trace(
        {{1000 * line, 4096, false}, {5 * line, 8192, false}, {9000 * line, 4096, false}});
    const Workload w = trace_workload(t, line, 2);
    ASSERT_EQ(w.ops.size(), 2u);
    EXPECT_EQ(w.file_size, 3 * line) << "lines 5, 6 and 1000; line 9000 is not replayed";
}

TEST(TraceWorkload, AScanFarOutStaysAScanAtTheStartOfTheFile) {
    Trace t = block_trace({});
    for (std::uint64_t i = 0; i < 10; ++i)
        t.requests.push_back(Request{(1ull << 40) + i * line, 4096, false});
    const Workload w = trace_workload(t, line, 100);
    EXPECT_EQ(w.file_size, 10 * line);
    for (std::size_t i = 0; i < w.ops.size(); ++i)
        EXPECT_EQ(w.ops[i].offset, static_cast<off_t>(i * line));
    EXPECT_TRUE(w.sequential);
}

TEST(TraceWorkload, LargerLinesHoldSeveralRequests) {
    const Trace t = block_trace({{3 * line, 4096, false}, {70 * line, 4096, true}});
    const Workload w = trace_workload(t, 16 * line, 100); // lines 0 and 4 of 64 KiB
    EXPECT_EQ(w.file_size, 2 * 16 * line);
    EXPECT_EQ(w.ops[0].offset, static_cast<off_t>(3 * line));
    EXPECT_EQ(w.ops[1].offset, static_cast<off_t>(16 * line + 6 * line));
}

TEST(TraceWorkload, RejectsObjectTracesAndTracesWithoutRequests) {
    Trace objects = block_trace({{1, 100, false}});
    objects.kind = TraceKind::objects;
    EXPECT_THROW(trace_workload(objects, line, 10), std::invalid_argument);
    EXPECT_THROW(trace_workload(block_trace({}), line, 10), std::invalid_argument);
    EXPECT_THROW(trace_workload(block_trace({{0, 4096, false}}), line, 0), std::invalid_argument);
}

TEST(TraceWorkload, ABlockTraceKeepsItsOffsetsAndAnObjectTraceGetsThem) {
    const Trace blocks = block_trace({{5 * line, 4096, false}});
    EXPECT_EQ(with_offsets(blocks, std::nullopt).requests[0].id, 5 * line);
    EXPECT_THROW(with_offsets(blocks, 512), std::invalid_argument) << "a unit for byte offsets";
    Trace objects = blocks;
    objects.kind = TraceKind::objects;
    EXPECT_EQ(with_offsets(objects, 512).requests[0].id, 5 * line * 512) << "ids x unit";
    EXPECT_EQ(with_offsets(objects, std::nullopt).requests[0].id, 0u) << "laid end to end";
}

TEST(SyntheticWorkload, ASequentialPatternWrapsAroundTheWorkingSet) {
    const Workload w = synthetic_workload("sequential", 8 * line, line, 20, 0, 1);
    ASSERT_EQ(w.ops.size(), 20u);
    for (std::size_t i = 0; i < w.ops.size(); ++i)
        EXPECT_EQ(w.ops[i].offset, static_cast<off_t>(i % 8 * line));
    EXPECT_TRUE(w.sequential);
    EXPECT_EQ(w.file_size, 8 * line);
}

TEST(SyntheticWorkload, WritesComeAtTheirRatioAndRequestsStayInTheWorkingSet) {
    const Workload w = synthetic_workload("zipf", 64 * line, 2 * line, 2000, 0.25, 7);
    EXPECT_NEAR(double(w.writes) / 2000, 0.25, 0.04);
    EXPECT_EQ(w.reads + w.writes, 2000u);
    EXPECT_FALSE(w.sequential);
    for (const Op& op : w.ops) {
        EXPECT_EQ(op.size, 2 * line);
        EXPECT_LE(static_cast<std::uint64_t>(op.offset) + op.size, 64 * line);
    }
    EXPECT_THROW(synthetic_workload("strided", 64 * line, line, 10, 0, 1), std::invalid_argument);
}

TEST(Workload, AsATraceItKeepsEveryRequest) {
    const Workload w = synthetic_workload("random", 16 * line, line, 50, 0.5, 3);
    const Trace t = w.as_trace();
    EXPECT_EQ(t.kind, TraceKind::blocks);
    ASSERT_EQ(t.requests.size(), w.ops.size());
    for (std::size_t i = 0; i < w.ops.size(); ++i) {
        EXPECT_EQ(t.requests[i].id, static_cast<std::uint64_t>(w.ops[i].offset));
        EXPECT_EQ(t.requests[i].size, w.ops[i].size);
        EXPECT_EQ(t.requests[i].write, w.ops[i].write);
    }
}

} // namespace
} // namespace iosig::tier::bench
