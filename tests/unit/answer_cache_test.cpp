// Remembered answers (server/answer_cache.hpp): the read routes that keep their answers serve
// them on the I/O thread only while the store has not been written since, and the cache stays
// within its bounds.
#include "server/answer_cache.hpp"

#include <gtest/gtest.h>

#include "db/store.hpp"
#include "engine/job_scheduler.hpp"
#include "server/api_routes.hpp"
#include "server/app_context.hpp"
#include "support/routed_app_test.hpp"
#include "support/shipped_family.hpp"
#include "support/store_fixtures.hpp"
#include "support/test_paths.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

ApiResponse answer_with(const std::string& body) {
  ApiResponse response;
  response.body = body;
  return response;
}

TEST(AnswerCacheTest, AnswersOnlyAtTheWriteCountItWasStoredWith) {
  AnswerCache cache;
  cache.store("/v1/best?a=1", 7, answer_with("seven"));
  ASSERT_TRUE(cache.find("/v1/best?a=1", 7));
  EXPECT_EQ(cache.find("/v1/best?a=1", 7)->body, "seven");
  EXPECT_FALSE(cache.find("/v1/best?a=1", 8));
  EXPECT_FALSE(cache.find("/v1/best?a=2", 7));
  cache.store("/v1/best?a=1", 8, answer_with("eight"));
  EXPECT_EQ(cache.find("/v1/best?a=1", 8)->body, "eight");
}

TEST(AnswerCacheTest, StaysWithinItsByteBound) {
  AnswerCache cache;
  const std::string big(AnswerCache::kMaxBytes / 8, 'x');
  for (int i = 0; i < 20; ++i) cache.store("/k" + std::to_string(i), 1, answer_with(big));
  int kept = 0;
  for (int i = 0; i < 20; ++i) kept += cache.find("/k" + std::to_string(i), 1) ? 1 : 0;
  EXPECT_GT(kept, 0);
  EXPECT_LE(kept, 8);
  EXPECT_TRUE(cache.find("/k19", 1));  // the newest survives the emptying
  // An answer too large to be worth keeping is not kept.
  cache.store("/huge", 1, answer_with(std::string(AnswerCache::kMaxBytes, 'y')));
  EXPECT_FALSE(cache.find("/huge", 1));
}

// The real routes over a real store: a remembered history page lasts until the next write.
class RememberedRoutesTest : public test::RoutedAppTest {
 protected:
  RememberedRoutesTest() : RoutedAppTest({}, "no GPU in this test") {}

  HttpRequest get(const std::string& target) { return HttpRequest{http::verb::get, target, 11}; }
};

TEST_F(RememberedRoutesTest, HistoryIsAnsweredFromMemoryUntilTheNextWrite) {
  store_.create_job(test::tune_job());
  const HttpRequest history = get("/v1/history?limit=5");
  // Never asked: the I/O thread has no answer, the query pool's handler computes it.
  EXPECT_FALSE(router_.answer_on_io_thread(history, context_));
  const ApiResponse first = router_.dispatch(history, context_);
  ASSERT_EQ(first.status, HttpStatus::ok) << first.body;
  EXPECT_EQ(first.json()["count"], 1);
  const auto remembered = router_.answer_on_io_thread(history, context_);
  ASSERT_TRUE(remembered);
  EXPECT_EQ(remembered->body, first.body);
  // Another target is another answer.
  EXPECT_FALSE(router_.answer_on_io_thread(get("/v1/history?limit=6"), context_));

  store_.create_job(test::tune_job());  // a write: every remembered answer is stale
  EXPECT_FALSE(router_.answer_on_io_thread(history, context_));
  EXPECT_EQ(router_.dispatch(history, context_).json()["count"], 2);
}

// A page of one job's variants depends on that job only: another job's progress leaves it
// remembered, a write to the job itself does not.
TEST_F(RememberedRoutesTest, AJobsVariantPageOutlivesWritesToOtherJobs) {
  const std::int64_t finished = store_.create_job(test::tune_job());
  test::plan(store_, finished, 3);
  const std::int64_t running = store_.create_job(test::tune_job());
  const auto running_variants = test::plan(store_, running, 3);
  const HttpRequest page = get("/v1/jobs/" + std::to_string(finished) + "/variants?limit=2");
  ASSERT_EQ(router_.dispatch(page, context_).status, HttpStatus::ok);
  ASSERT_TRUE(router_.answer_on_io_thread(page, context_));

  store_.record_compile(running_variants[0].id, test::compiled(64, 1024), 128, 0);
  store_.set_job_status(running, JobStatus::running);
  store_.record_outcome(running_variants[0].id, test::measured(10.0, 1e-3));
  EXPECT_TRUE(router_.answer_on_io_thread(page, context_)) << "another job's writes dropped it";
  // The history lists every job's progress: any write drops it.
  const HttpRequest history = get("/v1/history");
  ASSERT_EQ(router_.dispatch(history, context_).status, HttpStatus::ok);
  store_.set_job_status(running, JobStatus::done);
  EXPECT_FALSE(router_.answer_on_io_thread(history, context_));

  store_.set_job_status(finished, JobStatus::cancelled);  // the job itself
  EXPECT_FALSE(router_.answer_on_io_thread(page, context_));
}

// /v1/best depends on the fronts: a compile-only job's writes leave it, a tune job's measured
// variant drops it.
TEST_F(RememberedRoutesTest, BestOutlivesACompileJobButNotATuneJobsMeasurement) {
  const std::int64_t tuned = store_.create_job(test::tune_job());
  const auto tuned_variants = test::plan(store_, tuned, 2);
  store_.record_outcome(tuned_variants[0].id, test::measured(20.0, 1e-3));
  store_.set_job_status(tuned, JobStatus::done);
  const HttpRequest best = get("/v1/best?family=gemm&dtype=bf16&M=4096&N=4096&K=4096");
  const ApiResponse first = router_.dispatch(best, context_);
  ASSERT_EQ(first.status, HttpStatus::ok) << first.body;
  ASSERT_TRUE(router_.answer_on_io_thread(best, context_));

  NewJob compile = test::tune_job();
  compile.mode = JobMode::compile;
  const std::int64_t compiling = store_.create_job(compile);
  const auto compiled = test::plan(store_, compiling, 2);
  store_.record_compile(compiled[0].id, test::compiled(64, 1024), 128, 0);
  VariantOutcome ok;
  ok.status = VariantStatus::compiled;
  store_.record_outcome(compiled[0].id, ok);
  store_.set_job_status(compiling, JobStatus::done);
  EXPECT_TRUE(router_.answer_on_io_thread(best, context_)) << "a compile job's writes dropped it";

  const std::int64_t retune = store_.create_job(test::tune_job());
  const auto retuned = test::plan(store_, retune, 1);
  store_.record_outcome(retuned[0].id, test::measured(10.0, 1e-3));
  EXPECT_FALSE(router_.answer_on_io_thread(best, context_));
  const ApiResponse second = router_.dispatch(best, context_);
  ASSERT_EQ(second.status, HttpStatus::ok) << second.body;
  EXPECT_EQ(second.json()["variant_id"], retuned[0].id);
}

TEST_F(RememberedRoutesTest, ErrorsAreNotRememberedAndUnrememberedRoutesWaitForThePool) {
  const HttpRequest missing = get("/v1/jobs/424242/variants");
  EXPECT_EQ(router_.dispatch(missing, context_).status, HttpStatus::not_found);
  EXPECT_FALSE(router_.answer_on_io_thread(missing, context_));
  const std::int64_t job = store_.create_job(test::tune_job());
  const HttpRequest one = get("/v1/jobs/" + std::to_string(job));
  EXPECT_EQ(router_.dispatch(one, context_).status, HttpStatus::ok);
  EXPECT_FALSE(router_.answer_on_io_thread(one, context_));  // GET /v1/jobs/{id}: not kept
  // /healthz and requests no route serves are answered on the I/O thread as before.
  const auto health = router_.answer_on_io_thread(get("/healthz"), context_);
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, HttpStatus::ok);
  const auto nowhere = router_.answer_on_io_thread(get("/v1/nowhere"), context_);
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, HttpStatus::not_found);
}

}  // namespace
}  // namespace kt
