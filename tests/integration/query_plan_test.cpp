// Every statement the API issues, captured while a real server answers each read endpoint over a
// seeded store, is run through EXPLAIN QUERY PLAN: none may scan the variants table (the one
// table that grows with every job, tens of thousands of rows each).
#include <gtest/gtest.h>

#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "client/kerntune_client.hpp"
#include "engine/warm_start.hpp"
#include "support/in_process_daemon.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

namespace http = boost::beast::http;

// The names a statement gives the variants table: itself and each alias ("variants v",
// "variants AS v").
std::set<std::string> variants_names(const std::string& sql) {
  static const std::set<std::string> keywords = {
      "where",  "join",   "left", "inner", "on", "order",   "group", "limit", "set",     "using",
      "values", "select", "from", "and",   "or", "natural", "cross", "union", "indexed", "not"};
  std::set<std::string> names = {"variants"};
  static const std::regex alias(R"(\bvariants\s+(?:AS\s+)?([A-Za-z_]\w*))", std::regex::icase);
  for (std::sregex_iterator it(sql.begin(), sql.end(), alias), end; it != end; ++it) {
    std::string name = (*it)[1];
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!keywords.contains(lower)) names.insert(name);
  }
  return names;
}

bool is_query(const std::string& sql) {
  static const std::regex query(R"(^\s*(SELECT|WITH|INSERT|UPDATE|DELETE|REPLACE)\b)",
                                std::regex::icase);
  return std::regex_search(sql, query);
}

class QueryPlanTest : public ::testing::Test {
 protected:
  // Done tune jobs on one GPU model, each with measured, failed and compiled variants and pruned
  // groups (the front and /v1/best have entries), plus one queued job for the cancel route.
  void SetUp() override {
    for (int j = 0; j < 12; ++j) {
      const auto job = store_.create_job(test::tune_job());
      store_.set_job_reference(job, 30);
      std::vector<VariantRecord> plan;
      for (int bm = 16; bm < 16 + 40; ++bm) plan.push_back(test::planned(bm));
      PrunedGroup pruned{"gemm_mma", "constraint failed: BM * BN <= 16384", 500, {}};
      const auto variants = store_.plan_variants(job, plan, {pruned});
      for (std::size_t i = 0; i < variants.size(); ++i) {
        const auto id = variants[i].id;
        store_.record_compile(id, test::compiled(64 + static_cast<int>(i), 0), 256, 16384);
        if (i % 4 == 3) {
          VariantOutcome failed;
          failed.status = VariantStatus::compile_error;
          failed.reason = "ptxas: too many registers";
          store_.record_outcome(id, failed);
        } else {
          store_.record_outcome(id, test::measured(10.0 + static_cast<double>((i * 7) % 13),
                                                   0.001 * static_cast<double>(i % 5)));
        }
      }
      store_.set_job_status(job, JobStatus::running);
      store_.set_job_status(job, JobStatus::done);
      first_variant_ = first_variant_ == 0 ? variants.front().id : first_variant_;
      last_job_ = job;
    }
    queued_job_ = store_.create_job(test::tune_job());
  }

  // Every read route, with the query parameters that choose a different statement.
  std::vector<std::pair<http::verb, std::string>> requests() const {
    const std::string job = "/v1/jobs/" + std::to_string(last_job_);
    const std::string variant = "/v1/variants/" + std::to_string(first_variant_ + 5);
    const std::string problem = "family=gemm&dtype=bf16&M=4096&N=4096&K=4096";
    const std::string device = "&device=NVIDIA%20H100%2080GB%20HBM3";
    return {
        {http::verb::get, "/healthz"},
        {http::verb::get, "/v1/families"},
        {http::verb::get, "/v1/devices"},
        {http::verb::get, job},
        {http::verb::head, job},
        {http::verb::get, job + "/variants"},
        {http::verb::get, job + "/variants?limit=5"},
        {http::verb::get, job + "/variants?limit=5&cursor=" + std::to_string(first_variant_ + 3)},
        {http::verb::get, job + "/variants?status=measured,compile_error&log=1&limit=3"},
        {http::verb::get, job + "/variants?exclude_pruned=true&limit=3"},
        {http::verb::get, variant},
        {http::verb::get, variant + "?log=1"},
        {http::verb::get, variant + "/kernel"},
        {http::verb::get, "/v1/best?" + problem},
        {http::verb::get, "/v1/best?" + problem + device},
        // Issue 15: a miss answered with the nearest tuned shape (any model, then one model).
        {http::verb::get, "/v1/best?family=gemm&dtype=bf16&M=2048&N=4096&K=4096&nearest=1"},
        {http::verb::get,
         "/v1/best?family=gemm&dtype=bf16&M=2048&N=4096&K=4096&nearest=1" + device},
        {http::verb::get, "/v1/pareto?" + problem},
        {http::verb::get, "/v1/pareto?" + problem + device},
        {http::verb::get, "/v1/history"},
        {http::verb::get, "/v1/history?limit=2"},
        {http::verb::get, "/v1/history?limit=2&cursor=" + std::to_string(last_job_ - 3)},
        {http::verb::get, "/v1/history?family=gemm&status=done&limit=2"},
        {http::verb::get, "/v1/history?status=queued"},
        {http::verb::get, "/v1/history?offset=1&limit=1"},
        {http::verb::get, "/v1/history?device=NVIDIA%20H100%2080GB%20HBM3&limit=3"},
        {http::verb::get, "/v1/tuned"},
        {http::verb::get, "/v1/tuned?family=gemm&device=NVIDIA%20H100%2080GB%20HBM3&limit=5"},
        {http::verb::delete_, "/v1/jobs/" + std::to_string(queued_job_)},
    };
  }

  test::InProcessDaemon daemon_;
  Store& store_ = daemon_.store;
  std::int64_t first_variant_ = 0;
  std::int64_t last_job_ = 0;
  std::int64_t queued_job_ = 0;
};

TEST_F(QueryPlanTest, NoApiQueryScansTheVariantsTable) {
  std::mutex mutex;
  std::vector<std::string> statements;
  store_.observe_statements([&](std::string_view sql) {
    std::lock_guard lock(mutex);
    statements.emplace_back(sql);
  });
  const Client client(daemon_.url);
  for (const auto& [method, target] : requests()) {
    try {
      client.call(method, target);
    } catch (const ClientError&) {
      // A 4xx (a kernel never stored) still ran its queries.
    }
  }
  // A new job's warm start (POST /v1/jobs needs a GPU here: its lookup is called directly).
  const Shape nearby{{"M", 2048}, {"N", 4096}, {"K", 4096}};
  EXPECT_TRUE(find_warm_start(store_, "gemm", "bf16", nearby, "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(find_warm_start(store_, "gemm", "bf16", nearby, ""));
  store_.observe_statements({});

  SQLite::Database db(daemon_.dir.path() / "kerntune.db", SQLite::OPEN_READONLY);
  int explained = 0, touching_variants = 0, nearest_lookups = 0;
  std::set<std::string> seen;
  for (const std::string& sql : statements) {
    if (!is_query(sql) || !seen.insert(sql).second) continue;
    ++explained;
    const auto names = variants_names(sql);
    if (std::regex_search(sql, std::regex(R"(\bvariants\b)", std::regex::icase)))
      ++touching_variants;
    SQLite::Statement plan(db, "EXPLAIN QUERY PLAN " + sql);
    std::string details;
    while (plan.executeStep()) {
      const std::string detail = plan.getColumn(3).getString();
      details += "\n  " + detail;
      std::smatch scan;
      if (std::regex_search(detail, scan, std::regex(R"(^SCAN (\w+))")) && names.contains(scan[1]))
        ADD_FAILURE() << "full scan of variants (" << detail << ") in:\n  " << sql;
    }
    // The nearest lookup reads a range of an index of tuned shapes, not the whole front table.
    if (sql.find("DISTINCT shape_key FROM pareto") != std::string::npos) {
      ++nearest_lookups;
      EXPECT_NE(details.find("SEARCH pareto USING COVERING INDEX"), std::string::npos)
          << sql << details;
    }
    RecordProperty("plan" + std::to_string(explained), sql + details);
  }
  // The routes did reach the store: a test that saw no variants query would prove nothing.
  EXPECT_GE(explained, 15);
  EXPECT_GE(touching_variants, 5);
  EXPECT_EQ(nearest_lookups, 2) << "with a device model and without";
}

TEST(QueryPlanNames, FindsTheVariantsTableAndItsAliases) {
  EXPECT_EQ(variants_names("SELECT * FROM variants v WHERE v.id = 1"),
            (std::set<std::string>{"variants", "v"}));
  EXPECT_EQ(variants_names("SELECT * FROM variants AS x JOIN jobs j ON x.job_id = j.id"),
            (std::set<std::string>{"variants", "x"}));
  EXPECT_EQ(variants_names("SELECT * FROM variants WHERE id = 1"),
            (std::set<std::string>{"variants"}));
}

}  // namespace
}  // namespace kt
