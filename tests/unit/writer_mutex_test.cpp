// The writer mutex's stamps (db/writer_mutex.hpp): a write that names its scope moves only the
// stamps of what it touched; one that names nothing moves every stamp.
#include "db/writer_mutex.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <tuple>

namespace kt::db {
namespace {

TEST(WriterMutexTest, AScopedWriteMovesOnlyTheStampsOfWhatItTouched) {
  WriterMutex writer;
  const auto job1 = writer.job_stamp(1), job2 = writer.job_stamp(2);
  const auto fronts = writer.fronts_stamp();
  {
    std::lock_guard lock(writer);
    writer.touches_job(1);
  }
  EXPECT_EQ(writer.writes(), 1u);
  EXPECT_NE(writer.job_stamp(1), job1);
  EXPECT_EQ(writer.job_stamp(2), job2);
  EXPECT_EQ(writer.fronts_stamp(), fronts);

  const auto after_job1 = writer.job_stamp(1);
  {
    std::lock_guard lock(writer);
    writer.touches_job(2);
    writer.touches_fronts();
  }
  EXPECT_EQ(writer.job_stamp(1), after_job1);
  EXPECT_NE(writer.job_stamp(2), job2);
  EXPECT_NE(writer.fronts_stamp(), fronts);

  // The compile cache: counted as a write, no stamp moves.
  const auto before =
      std::make_tuple(writer.job_stamp(1), writer.job_stamp(2), writer.fronts_stamp());
  {
    std::lock_guard lock(writer);
    writer.touches_no_answer();
  }
  EXPECT_EQ(writer.writes(), 3u);
  EXPECT_EQ(std::make_tuple(writer.job_stamp(1), writer.job_stamp(2), writer.fronts_stamp()),
            before);
}

TEST(WriterMutexTest, AWriteThatNamesNoScopeMovesEveryStamp) {
  WriterMutex writer;
  {
    std::lock_guard lock(writer);
    writer.touches_job(1);
  }
  const auto job1 = writer.job_stamp(1), job7 = writer.job_stamp(7);
  const auto fronts = writer.fronts_stamp();
  { std::lock_guard lock(writer); }
  EXPECT_NE(writer.job_stamp(1), job1);
  EXPECT_NE(writer.job_stamp(7), job7);  // a job never written before too
  EXPECT_NE(writer.fronts_stamp(), fronts);
  // The scope is the one write's: the next scoped write does not inherit "everything".
  const auto job7_now = writer.job_stamp(7);
  {
    std::lock_guard lock(writer);
    writer.touches_job(1);
  }
  EXPECT_EQ(writer.job_stamp(7), job7_now);
}

}  // namespace
}  // namespace kt::db
