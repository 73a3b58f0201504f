// kt::Store's leases (db/lease_store.cpp): a daemon claims a job's planned variants in batches,
// only the lease holder writes a variant, an expired lease sends the variant back to planned, and
// the third expiry of begun work, under two daemons at least, records it as a fault (fewer, or
// expiries of one daemon registration, leave it plannable, as do expiries of a claimed variant
// whose work never began). One daemon on either backend; two daemons
// (two stores, as two processes would be) on PostgreSQL.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;
using namespace std::chrono_literals;

VariantOutcome compiled_outcome() {
  VariantOutcome outcome;
  outcome.status = VariantStatus::compiled;
  return outcome;
}

class LeaseStoreTest : public StoreBackendFixture {};

TEST_P(LeaseStoreTest, BatchesAreClaimedInPlanOrderWithoutOverlapUntilNoneIsLeft) {
  Store store(db_path());
  const std::int64_t daemon = store.register_daemon("host-a", 11, "[]", 60000);
  const std::int64_t job = store.create_job(tune_job());
  const auto planned = plan(store, job, 7);
  const auto first = store.claim_variants(job, 3);
  const auto second = store.claim_variants(job, 3);
  const auto third = store.claim_variants(job, 3);
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(second.size(), 3u);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_TRUE(store.claim_variants(job, 3).empty());
  std::vector<std::int64_t> claimed;
  for (const auto* batch : {&first, &second, &third})
    for (const auto& v : *batch) claimed.push_back(v.id);
  EXPECT_EQ(claimed, ids_of(planned));  // each once, in plan order
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE lease_owner = " +
                      std::to_string(daemon) + " AND lease_expires_ms IS NOT NULL"),
            7);
  EXPECT_EQ(store.leased_elsewhere(job), 0);
  const auto daemons = store.daemons();
  ASSERT_EQ(daemons.size(), 1u);
  EXPECT_EQ(daemons[0].host, "host-a");
  EXPECT_EQ(daemons[0].pid, 11);
  EXPECT_TRUE(daemons[0].alive);
}

TEST_P(LeaseStoreTest, OnlyTheLeaseHolderRecordsAndAnOutcomeEndsTheLease) {
  Store store(db_path());
  const std::int64_t job = store.create_job(tune_job());
  const auto planned = plan(store, job, 2);
  store.register_daemon("host-a", 11, "[]", 60000);
  ASSERT_EQ(store.claim_variants(job, 1).size(), 1u);
  store.record_compile(planned[0].id, compiled(32, 0), 128, 0);
  store.record_outcome(planned[0].id, compiled_outcome());
  EXPECT_EQ(store.variant(planned[0].id)->status, VariantStatus::compiled);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE lease_owner IS NOT NULL"), 0);
  // A second outcome for the same variant is refused: it keeps exactly one.
  VariantOutcome late;
  late.status = VariantStatus::compile_error;
  EXPECT_THROW(store.record_outcome(planned[0].id, late), LeaseLost);
  EXPECT_EQ(store.variant(planned[0].id)->status, VariantStatus::compiled);
}

// The daemon holding the variant claims it, begins its work and "dies" (no heartbeat): the lease
// expires. What the expiry did.
LeaseExpiry begin_and_die(Store& store, std::int64_t job, std::int64_t variant_id) {
  const auto claimed = store.claim_variants(job, 1);
  EXPECT_EQ(claimed.size(), 1u);
  if (claimed.empty()) return {};
  EXPECT_EQ(claimed[0].id, variant_id);  // first in plan order again
  store.begin_variant_work(variant_id);
  std::this_thread::sleep_for(150ms);
  return store.expire_leases();
}

TEST_P(LeaseStoreTest, BegunWorkExpiringUnderTwoDaemonsGoesBackAndTheThirdExpiryIsAFault) {
  Store store(db_path());
  const std::int64_t job = store.create_job(tune_job());
  const auto planned = plan(store, job, 2);
  const std::int64_t variant = planned[0].id;
  const std::string of_variant = " FROM variants WHERE id = " + std::to_string(variant);
  // Each registration is a daemon's life, as a restart registers anew.
  store.register_daemon("host-a", 11, "[]", 50);
  ASSERT_EQ(store.claim_variants(job, 1).size(), 1u);
  store.begin_variant_work(variant);
  EXPECT_EQ(query_int("SELECT COUNT(*)" + of_variant + " AND work_began_ms IS NOT NULL"), 1);
  store.heartbeat();  // extends it, but the daemon then "dies": no more heartbeats
  std::this_thread::sleep_for(150ms);
  const LeaseExpiry first = store.expire_leases();
  EXPECT_EQ(first.returned, 1);
  EXPECT_EQ(first.unstarted, 0);
  EXPECT_EQ(first.faulted, 0);
  EXPECT_EQ(store.variant(variant)->status, VariantStatus::pending);
  EXPECT_EQ(query_int("SELECT lease_expiries" + of_variant), 1);
  // The mark went with the lease: the next holder's expiry counts only once it begins too.
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE work_began_ms IS NOT NULL"), 0);

  // Two daemons died on it: still planned (a daemon's death is weak evidence against a variant).
  const std::int64_t b = store.register_daemon("host-b", 22, "[]", 50);
  const LeaseExpiry second = begin_and_die(store, job, variant);
  EXPECT_EQ(second.returned, 1);
  EXPECT_EQ(second.faulted, 0);
  EXPECT_EQ(store.variant(variant)->status, VariantStatus::pending);
  EXPECT_EQ(query_int("SELECT lease_expiries" + of_variant), 2);

  // The third, under a restarted host-a: recorded crashed, naming the daemons.
  store.register_daemon("host-a", 12, "[]", 50);
  const LeaseExpiry third = begin_and_die(store, job, variant);
  EXPECT_EQ(third.returned, 0);
  EXPECT_EQ(third.faulted, 1);
  const auto fault = store.variant(variant);
  EXPECT_EQ(fault->status, VariantStatus::crashed);
  EXPECT_EQ(fault->failed_gate, "lease");
  EXPECT_NE(fault->reason.find("lease expired 3 times with its work begun, under 3 different "
                               "daemons"),
            std::string::npos)
      << fault->reason;
  for (const char* daemon : {"host-a, pid 11", "host-b, pid 22", "host-a, pid 12"})
    EXPECT_NE(fault->reason.find(daemon), std::string::npos) << fault->reason;
  EXPECT_NE(fault->reason.find("daemon " + std::to_string(b)), std::string::npos) << fault->reason;
  EXPECT_EQ(fault->reason.find("before beginning it"), std::string::npos) << fault->reason;
  // Not handed out again: the other variant is what is left.
  const auto rest = store.claim_variants(job, 5);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].id, planned[1].id);
  EXPECT_EQ(store.progress(job).by_status["crashed"], 1);
}

TEST_P(LeaseStoreTest, ExpiriesUnderOneDaemonRegistrationAloneAreNeverAFault) {
  Store store(db_path());
  const std::int64_t job = store.create_job(tune_job());
  const auto planned = plan(store, job, 1);
  const std::int64_t variant = planned[0].id;
  // One registration whose leases lapsed while it lived on (a stall, a database outage): four
  // expiries of begun work, no second daemon, no fault.
  store.register_daemon("host-a", 11, "[]", 50);
  for (int round = 0; round < 4; ++round) {
    const LeaseExpiry expiry = begin_and_die(store, job, variant);
    EXPECT_EQ(expiry.returned, 1) << "round " << round;
    EXPECT_EQ(expiry.faulted, 0) << "round " << round;
  }
  EXPECT_EQ(store.variant(variant)->status, VariantStatus::pending);
  EXPECT_EQ(query_int("SELECT lease_expiries FROM variants WHERE id = " + std::to_string(variant)),
            4);
  // A second daemon's expiry then meets the rule.
  store.register_daemon("host-b", 22, "[]", 50);
  const LeaseExpiry fifth = begin_and_die(store, job, variant);
  EXPECT_EQ(fifth.faulted, 1);
  const auto fault = store.variant(variant);
  EXPECT_EQ(fault->status, VariantStatus::crashed);
  EXPECT_NE(fault->reason.find("5 times with its work begun, under 2 different daemons"),
            std::string::npos)
      << fault->reason;
}

TEST_P(LeaseStoreTest, AClaimedVariantWhoseWorkNeverBeganStaysPlannableAfterTwoExpiries) {
  Store store(db_path());
  const std::int64_t job = store.create_job(tune_job());
  const auto planned = plan(store, job, 2);
  store.register_daemon("host-a", 11, "[]", 50);
  for (int round = 0; round < 3; ++round) {
    // Claimed in a batch, then the daemon "dies" before beginning either variant.
    ASSERT_EQ(store.claim_variants(job, 2).size(), 2u) << "round " << round;
    std::this_thread::sleep_for(150ms);
    const LeaseExpiry expiry = store.expire_leases();
    EXPECT_EQ(expiry.returned, 2);
    EXPECT_EQ(expiry.unstarted, 2);
    EXPECT_EQ(expiry.faulted, 0);
  }
  for (const auto& v : planned) {
    const auto after = store.variant(v.id);
    EXPECT_EQ(after->status, VariantStatus::pending);
    EXPECT_EQ(after->reason, "");
  }
  EXPECT_EQ(query_int("SELECT SUM(lease_expiries) FROM variants"), 0);
  EXPECT_EQ(store.progress(job).by_status.count("crashed"), 0u);
  // Each expiry is in the history all the same, marked as one of work not begun.
  const std::string history =
      query_text("SELECT lease_history FROM variants WHERE id = " + std::to_string(planned[0].id));
  EXPECT_NE(history.find("host-a, pid 11) before beginning it"), std::string::npos) << history;
  // Still handed out, and a begun one now counts from zero: its first begun expiry is not a fault.
  ASSERT_EQ(store.claim_variants(job, 1).size(), 1u);
  store.begin_variant_work(planned[0].id);
  std::this_thread::sleep_for(150ms);
  const LeaseExpiry begun = store.expire_leases();
  EXPECT_EQ(begun.returned, 1);
  EXPECT_EQ(begun.unstarted, 0);
  EXPECT_EQ(begun.faulted, 0);
  EXPECT_EQ(
      query_int("SELECT lease_expiries FROM variants WHERE id = " + std::to_string(planned[0].id)),
      1);
  EXPECT_EQ(store.variant(planned[0].id)->status, VariantStatus::pending);
}

TEST_P(LeaseStoreTest, BeginningWorkIsTheLeaseHoldersAlone) {
  Store store(db_path());
  const std::int64_t job = store.create_job(tune_job());
  const auto planned = plan(store, job, 2);
  store.register_daemon("host-a", 11, "[]", 60000);
  ASSERT_EQ(store.claim_variants(job, 1).size(), 1u);
  store.begin_variant_work(planned[0].id);
  store.record_outcome(planned[0].id, compiled_outcome());
  // Its outcome is stored: nothing more to begin, and nothing is written.
  EXPECT_THROW(store.begin_variant_work(planned[0].id), LeaseLost);
  EXPECT_EQ(store.variant(planned[0].id)->status, VariantStatus::compiled);
  // A planned variant no daemon holds (a tool's direct write) begins without a lease to count.
  store.begin_variant_work(planned[1].id);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE work_began_ms IS NOT NULL AND id = " +
                      std::to_string(planned[1].id)),
            0);
}

TEST_P(LeaseStoreTest, ACancelEndsTheLeasesSoTheHolderCannotOverwriteIt) {
  Store store(db_path());
  const std::int64_t job = store.create_job(tune_job());
  const auto planned = plan(store, job, 3);
  store.register_daemon("host-a", 11, "[]", 60000);
  ASSERT_EQ(store.claim_variants(job, 3).size(), 3u);
  store.set_job_status(job, JobStatus::cancelled, "cancelled by request");
  EXPECT_THROW(store.record_outcome(planned[1].id, compiled_outcome()), LeaseLost);
  EXPECT_EQ(store.variant(planned[1].id)->status, VariantStatus::cancelled);
}

TEST_P(LeaseStoreTest, AStoppedDaemonReleasesItsLeasesWithoutCountingAnExpiry) {
  Store store(db_path());
  const std::int64_t job = store.create_job(tune_job());
  plan(store, job, 2);
  store.register_daemon("host-a", 11, "[]", 60000);
  const auto claimed = store.claim_variants(job, 2);
  ASSERT_EQ(claimed.size(), 2u);
  store.begin_variant_work(claimed[0].id);
  store.release_leases();
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE lease_owner IS NOT NULL"), 0);
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM variants WHERE work_began_ms IS NOT NULL"), 0);
  EXPECT_EQ(query_int("SELECT SUM(lease_expiries) FROM variants"), 0);
  EXPECT_TRUE(store.daemons()[0].stopped);
  EXPECT_FALSE(store.daemons()[0].alive);
}

INSTANTIATE_TEST_SUITE_P(Backends, LeaseStoreTest, kStoreBackends, backend_name);

// On SQLite one daemon owns the file: a new one (a restart after kill -9) takes over at once.
class LeaseTakeoverTest : public StoreFixture {};

TEST_F(LeaseTakeoverTest, ARestartedDaemonOnSqliteTakesOverTheLeasesOfTheOneBefore) {
  std::int64_t job = 0;
  {
    Store killed(db_path());
    job = killed.create_job(tune_job());
    plan(killed, job, 3);
    killed.register_daemon("host-a", 11, "[]", 60000);
    const auto claimed = killed.claim_variants(job, 3);
    ASSERT_EQ(claimed.size(), 3u);
    killed.begin_variant_work(claimed[0].id);
  }  // gone without release_leases, as after kill -9
  Store restarted(db_path());
  restarted.register_daemon("host-a", 12, "[]", 60000);
  EXPECT_EQ(restarted.claim_variants(job, 5).size(), 3u);
  // The takeover is a release, not an expiry: the mark of begun work goes, nothing is counted.
  auto raw = db::open_connection(db_path().string(), db::Access::read);
  db::Statement marks(*raw,
                      "SELECT COUNT(*), SUM(lease_expiries) FROM variants"
                      " WHERE work_began_ms IS NOT NULL OR lease_expiries > 0");
  ASSERT_TRUE(marks.step());
  EXPECT_EQ(marks.column(0).int64(), 0);
}

// Two daemons (two stores, as in two processes) on one PostgreSQL database.
class LeaseFleetTest : public StoreBackendFixture {};

TEST_P(LeaseFleetTest, TwoDaemonsClaimDisjointBatchesAndTakeOverExpiredOnes) {
  Store a(db_path());
  Store b(db_path());
  const std::int64_t daemon_a = a.register_daemon("host-a", 11, "[]", 200);
  const std::int64_t daemon_b = b.register_daemon("host-b", 22, "[]", 60000);
  ASSERT_NE(daemon_a, daemon_b);
  const std::int64_t job = a.create_job(tune_job());
  const auto planned = plan(a, job, 6);
  const auto of_a = a.claim_variants(job, 3);
  const auto of_b = b.claim_variants(job, 3);
  ASSERT_EQ(of_a.size(), 3u);
  ASSERT_EQ(of_b.size(), 3u);
  std::set<std::int64_t> all;
  for (const auto& v : of_a) all.insert(v.id);
  for (const auto& v : of_b) all.insert(v.id);
  EXPECT_EQ(all.size(), 6u);
  EXPECT_EQ(b.leased_elsewhere(job), 3);
  // B may not write what A holds.
  EXPECT_THROW(b.record_outcome(of_a[0].id, compiled_outcome()), LeaseLost);
  a.record_outcome(of_a[0].id, compiled_outcome());
  for (const auto& v : of_b) b.record_outcome(v.id, compiled_outcome());
  EXPECT_TRUE(b.claim_variants(job, 3).empty());  // A's live leases are A's

  // A dies (no heartbeat): after its lease, B's next claim takes A's two unfinished variants.
  std::this_thread::sleep_for(400ms);
  const auto taken = b.claim_variants(job, 3);
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].id, of_a[1].id);
  EXPECT_EQ(taken[1].id, of_a[2].id);
  EXPECT_THROW(a.record_outcome(of_a[1].id, compiled_outcome()), LeaseLost);  // too late
  for (const auto& v : taken) b.record_outcome(v.id, compiled_outcome());
  const auto progress = b.progress(job);
  EXPECT_EQ(progress.by_status.at("compiled"), 6);
  EXPECT_EQ(progress.by_status.count("pending") == 0 || progress.by_status.at("pending") == 0,
            true);
  const auto daemons = b.daemons();
  ASSERT_EQ(daemons.size(), 2u);
  EXPECT_FALSE(daemons[0].alive);  // A: no heartbeat within its lease
  EXPECT_TRUE(daemons[1].alive);
}

TEST_P(LeaseFleetTest, ConcurrentClaimsFromTwoDaemonsHandOutEveryVariantOnce) {
  Store a(db_path());
  Store b(db_path());
  a.register_daemon("host-a", 11, "[]", 60000);
  b.register_daemon("host-b", 22, "[]", 60000);
  const std::int64_t job = a.create_job(tune_job());
  const auto planned = plan(a, job, 60);
  std::vector<std::int64_t> got_a, got_b;
  auto drain = [job](Store& store, std::vector<std::int64_t>& got) {
    for (;;) {
      const auto batch = store.claim_variants(job, 4);
      if (batch.empty()) return;
      for (const auto& v : batch) got.push_back(v.id);
    }
  };
  std::thread ta([&] { drain(a, got_a); });
  std::thread tb([&] { drain(b, got_b); });
  ta.join();
  tb.join();
  std::vector<std::int64_t> all = got_a;
  all.insert(all.end(), got_b.begin(), got_b.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, ids_of(planned));
  EXPECT_FALSE(got_a.empty());
  EXPECT_FALSE(got_b.empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, LeaseFleetTest, ::testing::Values(db::Dialect::postgresql),
                         backend_name);

}  // namespace
}  // namespace kt
