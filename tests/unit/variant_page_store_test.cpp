// Keyset paging in the store (Store::variant_page, Store::job_page): pages hold at most `limit`
// rows, follow each other in id order without gaps or repeats, respect the filters, and never
// reach into another job's rows.
#include <set>

#include <gtest/gtest.h>

#include "db/store.hpp"
#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;

class VariantPageStoreTest : public StoreBackendFixture {
 protected:
  // 250 variants; every third (BM divisible by 3) unsupported, the rest pending.
  std::vector<VariantRecord> plan_250(Store& store, std::int64_t job_id) {
    std::vector<VariantRecord> plan;
    for (int bm = 1; bm <= 250; ++bm)
      plan.push_back(bm % 3 == 0 ? planned(bm, VariantStatus::unsupported_arch, "sm_100a")
                                 : planned(bm));
    return store.plan_variants(job_id, plan);
  }

  // Every page from the start; the sizes of the pages in `sizes`.
  std::vector<std::int64_t> all_pages(Store& store, std::int64_t job_id, VariantPageQuery query,
                                      std::vector<std::size_t>* sizes = nullptr) {
    std::vector<std::int64_t> ids;
    for (int guard = 0; guard < 1000; ++guard) {
      const VariantPage page = store.variant_page(job_id, query);
      if (sizes) sizes->push_back(page.variants.size());
      for (const VariantRecord& v : page.variants) {
        EXPECT_EQ(v.job_id, job_id);
        ids.push_back(v.id);
      }
      if (!page.next_after_id) return ids;
      EXPECT_EQ(*page.next_after_id, page.variants.back().id);
      query.after_id = *page.next_after_id;
    }
    ADD_FAILURE() << "the pages never ended";
    return ids;
  }
};

TEST_P(VariantPageStoreTest, ThreePagesOf100CoverEveryVariantOnceInIdOrder) {
  Store store(db_path());
  const auto job = store.create_job(tune_job());
  const auto planned_rows = plan_250(store, job);
  VariantPageQuery query;  // the default limit: 100
  EXPECT_EQ(query.limit, 100);
  std::vector<std::size_t> sizes;
  const auto ids = all_pages(store, job, query, &sizes);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{100, 100, 50}));
  ASSERT_EQ(ids.size(), 250u);
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], planned_rows[i].id) << i;
}

TEST_P(VariantPageStoreTest, AnExactMultipleEndsWithoutAnEmptyPage) {
  Store store(db_path());
  const auto job = store.create_job(tune_job());
  plan(store, job, 200);
  std::vector<std::size_t> sizes;
  all_pages(store, job, VariantPageQuery{}, &sizes);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{100, 100}));
}

TEST_P(VariantPageStoreTest, StatusFilterAndGatedOnlyPageOverMatchingRowsOnly) {
  Store store(db_path());
  const auto job = store.create_job(tune_job());
  plan_250(store, job);
  VariantPageQuery unsupported_only;
  unsupported_only.statuses = {VariantStatus::unsupported_arch};
  unsupported_only.limit = 30;
  std::vector<std::size_t> sizes;
  const auto unsupported_ids = all_pages(store, job, unsupported_only, &sizes);
  EXPECT_EQ(unsupported_ids.size(), 83u);  // 3, 6, ..., 249
  EXPECT_EQ(sizes, (std::vector<std::size_t>{30, 30, 23}));
  for (std::size_t i = 1; i < unsupported_ids.size(); ++i)
    EXPECT_LT(unsupported_ids[i - 1], unsupported_ids[i]);
  for (const auto id : unsupported_ids)
    EXPECT_EQ(store.variant(id)->status, VariantStatus::unsupported_arch);

  VariantPageQuery gated;
  gated.gated_only = true;
  const auto gated_ids = all_pages(store, job, gated);
  EXPECT_EQ(gated_ids.size(), 167u);
  std::set<std::int64_t> overlap(unsupported_ids.begin(), unsupported_ids.end());
  for (const auto id : gated_ids) EXPECT_FALSE(overlap.count(id)) << id;
}

TEST_P(VariantPageStoreTest, PagesStayInsideTheirJobWhenIdsInterleave) {
  Store store(db_path());
  const auto first = store.create_job(tune_job());
  const auto second = store.create_job(tune_job());
  plan(store, first, 50);
  plan(store, second, 50);
  // A resumed first job appends rows with ids after the second job's.
  std::vector<VariantRecord> more;
  for (int bm = 51; bm <= 120; ++bm) more.push_back(planned(bm));
  store.plan_variants(first, more);
  VariantPageQuery query;
  query.limit = 40;
  EXPECT_EQ(all_pages(store, first, query).size(), 120u);
  EXPECT_EQ(all_pages(store, second, query).size(), 50u);
  EXPECT_TRUE(store.variant_page(999, query).variants.empty());
  EXPECT_FALSE(store.variant_page(999, query).next_after_id);
}

TEST_P(VariantPageStoreTest, JobPagesGoNewestFirstAndEnd) {
  Store store(db_path());
  std::vector<std::int64_t> created;
  for (int i = 0; i < 5; ++i) created.push_back(store.create_job(tune_job()));
  JobFilter filter;
  filter.limit = 2;
  std::vector<std::int64_t> seen;
  std::int64_t before = 0;
  int pages = 0;
  for (; pages < 10; ++pages) {
    const JobPage page = store.job_page(filter, before);
    EXPECT_LE(page.jobs.size(), 2u);
    for (const JobRecord& job : page.jobs) seen.push_back(job.id);
    if (!page.next_before_id) break;
    before = *page.next_before_id;
  }
  EXPECT_EQ(pages, 2);  // pages 0, 1, 2: the third holds the last job and ends
  EXPECT_EQ(seen, (std::vector<std::int64_t>{created[4], created[3], created[2], created[1],
                                             created[0]}));
}

INSTANTIATE_TEST_SUITE_P(Backends, VariantPageStoreTest, kStoreBackends, backend_name);

}  // namespace
}  // namespace kt
