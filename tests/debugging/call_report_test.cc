// The flight-recorder dump format and rccrun's table (base/call_report.h), from dumps written as
// the library writes them.
#include <gtest/gtest.h>

#include "base/call_report.h"

namespace {

using rcc::report::Dump;

Dump parse(const std::string& text) {
  Dump dump;
  std::string error;
  EXPECT_TRUE(rcc::report::parse_dump(text, &dump, &error)) << error;
  return dump;
}

std::string rank_dump(int rank, const std::string& calls) {
  return "# rcc flight recorder\nrank=" + std::to_string(rank) +
         " size=4 pid=1 host=h reason=timeout\ncomm=0 members=0,1,2,3\ncomm=3 members=1,3\n" + calls;
}

TEST(CallReport, RankRanges) {
  EXPECT_EQ(rcc::report::rank_ranges({}), "");
  EXPECT_EQ(rcc::report::rank_ranges({3}), "3");
  EXPECT_EQ(rcc::report::rank_ranges({5, 0, 1, 2, 7, 8, 2}), "0-2,5,7-8");
}

TEST(CallReport, ParsesADump) {
  Dump d = parse(rank_dump(2,
                           "call comm=0 seq=7 op=allreduce datatype=RCC_FLOAT32 count=4 peer=-1 tag=-1 state=running "
                           "age_ms=61234 status=RCC_SUCCESS waits_for=1,3\n"));
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.size, 4);
  EXPECT_EQ(d.reason, "timeout");
  ASSERT_EQ(d.comms.size(), 2u);
  EXPECT_EQ(d.comms[3], (std::vector<int>{1, 3}));
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].seq, 7u);
  EXPECT_EQ(d.calls[0].op, "allreduce");
  EXPECT_EQ(d.calls[0].age_ms, 61234);
  EXPECT_EQ(d.calls[0].waits_for, "1,3");
}

TEST(CallReport, RefusesWhatIsNotADump) {
  Dump d;
  std::string error;
  EXPECT_FALSE(rcc::report::parse_dump("hello\nworld\n", &d, &error));
  EXPECT_NE(error.find("not an rcc flight-recorder dump"), std::string::npos);
  EXPECT_FALSE(rcc::report::parse_dump("rank=4 size=4\n", &d, &error));  // rank out of range
}

TEST(CallReport, TablePutsTheOddRankFirst) {
  auto in = [](int rank, int seq, const char* op, const char* state, const char* waits) {
    return rank_dump(rank, "call comm=0 seq=" + std::to_string(seq) + " op=" + op +
                               " datatype=RCC_INT32 count=1 peer=-1 tag=-1 state=" + state +
                               " age_ms=2000 status=RCC_SUCCESS waits_for=" + waits + "\n");
  };
  std::vector<Dump> dumps = {
      parse(in(0, 12, "allreduce", "running", "3")), parse(in(1, 12, "allreduce", "running", "3")),
      parse(in(2, 12, "allreduce", "running", "3")), parse(in(3, 11, "broadcast", "running", "0"))};
  const std::string table = rcc::report::format_table(dumps);
  const size_t odd = table.find("rank 3 is in broadcast #11 of comm 0");
  const size_t rest = table.find("ranks 0-2 are in allreduce #12 of comm 0, running 2.0 s, waiting for rank 3");
  ASSERT_NE(odd, std::string::npos) << table;
  ASSERT_NE(rest, std::string::npos) << table;
  EXPECT_LT(odd, rest) << table;
  EXPECT_NE(table.find("ranks disagree"), std::string::npos) << table;
  // Comm 3 (job ranks 1 and 3): no collective of it recorded.
  EXPECT_NE(table.find("comm 3 (2 ranks: job ranks 1,3)"), std::string::npos) << table;
}

TEST(CallReport, RanksWithoutADumpAreNamedLast) {
  std::vector<Dump> dumps = {parse(rank_dump(0,
                                             "call comm=0 seq=4 op=barrier datatype=RCC_UINT8 count=0 peer=-1 "
                                             "tag=-1 state=running age_ms=10 status=RCC_SUCCESS waits_for=2\n"))};
  const std::string table = rcc::report::format_table(dumps);
  const size_t missing = table.find("ranks 1-3: no dump");
  ASSERT_NE(missing, std::string::npos) << table;
  EXPECT_LT(table.find("rank 0 is in barrier #4"), missing) << table;
}

}  // namespace
