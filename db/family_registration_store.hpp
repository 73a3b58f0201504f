// Family registrations (POST /v1/families) from the upload to the outcome, held by the daemon
// compiling them (Store's registration methods; db/store.hpp documents them).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/model.hpp"

namespace kt {

// Finished family registrations kept for clients to poll, newest first.
inline constexpr int kKeptFamilyRegistrations = 256;

}  // namespace kt

namespace kt::db {

class LeaseStore;
class ReadPool;
class StoreWriter;

class FamilyRegistrationStore {
 public:
  // The daemon holding a registration is the fleet's (leases.daemon_id).
  FamilyRegistrationStore(StoreWriter& writer, ReadPool& readers, LeaseStore& leases)
      : writer_(writer), readers_(readers), leases_(leases) {}

  void create_family_registration(const FamilyRegistrationRecord& registration);
  std::optional<FamilyRegistrationRecord> family_registration(const std::string& id);
  std::vector<FamilyRegistrationRecord> claim_family_registrations();
  void finish_family_registration(const FamilyRegistrationRecord& outcome);

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
  LeaseStore& leases_;
};

}  // namespace kt::db
