// kt::Store's family registrations (db/family_registration_store.cpp) on both backends: a
// registration is read back as stored; the compiling ones of a daemon that is gone are claimed
// with their uploads by the next (a restart), never the ones a live daemon holds; an outcome
// drops the upload and ends the claim; the newest finished ones are kept.
#include <gtest/gtest.h>

#include "support/store_fixtures.hpp"

namespace kt {
namespace {

using namespace kt::test;
using Status = FamilyRegistrationRecord::Status;

FamilyRegistrationRecord compiling(const std::string& id) {
  FamilyRegistrationRecord registration;
  registration.id = id;
  registration.family = "user_gemm";
  registration.source_hash = std::string(64, 'a');
  registration.previous_hash = std::string(64, 'b');
  registration.manifest_json = R"({"name": "user_gemm"})";
  registration.sources = {{"k.cuh", "// kernel\n"}, {"ref.cuh", "// reference\n"}};
  return registration;
}

class FamilyRegistrationStoreTest : public StoreBackendFixture {};

TEST_P(FamilyRegistrationStoreTest, ARegistrationReadsBackAsStoredWithoutItsUpload) {
  Store store(db_path());
  store.register_daemon("host-a", 11, "[]", 60000);
  store.create_family_registration(compiling("r1"));
  const auto read = store.family_registration("r1");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->family, "user_gemm");
  EXPECT_EQ(read->source_hash, std::string(64, 'a'));
  EXPECT_EQ(read->previous_hash, std::string(64, 'b'));
  EXPECT_EQ(read->status, Status::compiling);
  EXPECT_EQ(read->compile_json, "");
  EXPECT_TRUE(read->manifest_json.empty());
  EXPECT_TRUE(read->sources.empty());
  EXPECT_FALSE(store.family_registration("r2"));
  // Its own daemon, alive, does not take it over.
  EXPECT_TRUE(store.claim_family_registrations().empty());
}

TEST_P(FamilyRegistrationStoreTest, ARestartClaimsTheCompilingOnesWithTheirUploadsOnce) {
  {
    Store before(db_path());
    before.register_daemon("host-a", 11, "[]", 60000);
    before.create_family_registration(compiling("r1"));
    before.create_family_registration(compiling("r2"));
    FamilyRegistrationRecord done = compiling("r3");
    before.create_family_registration(done);
    done.status = Status::failed;
    before.finish_family_registration(done);
    before.release_leases();  // the daemon stops cleanly: marked stopped
  }
  Store after(db_path());
  after.register_daemon("host-a", 12, "[]", 60000);
  const auto claimed = after.claim_family_registrations();
  ASSERT_EQ(claimed.size(), 2u);
  EXPECT_EQ(claimed[0].id, "r1");  // oldest first
  EXPECT_EQ(claimed[1].id, "r2");
  EXPECT_EQ(claimed[0].manifest_json, R"({"name": "user_gemm"})");
  EXPECT_EQ(claimed[0].sources, compiling("r1").sources);
  EXPECT_EQ(claimed[0].previous_hash, std::string(64, 'b'));
  EXPECT_TRUE(after.claim_family_registrations().empty());  // now held by this daemon

  FamilyRegistrationRecord outcome = claimed[0];
  outcome.status = Status::registered;
  outcome.message = "registered";
  outcome.compile_json = R"({"ok":true})";
  outcome.previous_hash = "";
  after.finish_family_registration(outcome);
  const auto read = after.family_registration("r1");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->status, Status::registered);
  EXPECT_EQ(read->message, "registered");
  EXPECT_EQ(read->compile_json, R"({"ok":true})");
  EXPECT_EQ(read->previous_hash, "");
  EXPECT_EQ(query_text("SELECT sources_json FROM family_registrations WHERE id = 'r1'"), "");
  EXPECT_EQ(query_text("SELECT manifest_json FROM family_registrations WHERE id = 'r1'"), "");
  EXPECT_EQ(after.family_registration("r3")->status, Status::failed);
}

TEST_P(FamilyRegistrationStoreTest, OnlyTheNewestFinishedRegistrationsAreKept) {
  Store store(db_path());
  const int total = kKeptFamilyRegistrations + 2;
  for (int i = 0; i < total; ++i) {
    FamilyRegistrationRecord registration = compiling("r" + std::to_string(i));
    store.create_family_registration(registration);
    if (i == 0) continue;  // still compiling: never dropped
    registration.status = Status::failed;
    store.finish_family_registration(registration);
  }
  EXPECT_TRUE(store.family_registration("r0"));
  EXPECT_FALSE(store.family_registration("r1"));
  EXPECT_TRUE(store.family_registration("r2"));
  EXPECT_TRUE(store.family_registration("r" + std::to_string(total - 1)));
  EXPECT_EQ(query_int("SELECT COUNT(*) FROM family_registrations WHERE status <> 'compiling'"),
            kKeptFamilyRegistrations);
}

INSTANTIATE_TEST_SUITE_P(Backends, FamilyRegistrationStoreTest, kStoreBackends, backend_name);

// Two daemons on one PostgreSQL database: a live daemon's registration is not taken over; once it
// is gone (stopped), the other daemon takes it.
class FamilyRegistrationFleetTest : public StoreBackendFixture {};

TEST_P(FamilyRegistrationFleetTest, ALiveDaemonsRegistrationIsLeftToIt) {
  Store first(db_path());
  first.register_daemon("host-a", 11, "[]", 60000);
  first.create_family_registration(compiling("r1"));
  Store second(db_path());
  second.register_daemon("host-b", 21, "[]", 60000);
  EXPECT_TRUE(second.claim_family_registrations().empty());
  first.release_leases();  // a clean stop
  const auto claimed = second.claim_family_registrations();
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].id, "r1");
}

INSTANTIATE_TEST_SUITE_P(Backends, FamilyRegistrationFleetTest,
                         ::testing::Values(db::Dialect::postgresql), backend_name);

}  // namespace
}  // namespace kt
