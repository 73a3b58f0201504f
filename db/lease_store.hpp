// The fleet: the daemons sharing the database and their leases on variants (the rules are in
// db/lease_store.cpp). The other parts of the store ask it who this daemon is and whether a write
// for a variant is still its lease holder's.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "db/model.hpp"

namespace kt {

// A write for a variant from a daemon that no longer holds its lease (it expired and another
// daemon claimed the variant, or the variant already has its outcome): nothing was written.
class LeaseLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A daemon of the fleet sharing this database (db/lease_store.cpp).
struct DaemonRecord {
  std::int64_t id = 0;
  std::string host;
  int pid = 0;
  std::string gpus_json;  // the GPUs it found: [{"ordinal", "name", "uuid", "arch"}]
  std::int64_t lease_ms = 0;
  std::string started_at;
  std::int64_t heartbeat_age_ms = 0;  // since its last heartbeat, by the database's clock
  bool stopped = false;               // stopped cleanly (its leases were released)
  bool alive = false;                 // not stopped, and its last heartbeat within lease_ms
};

// What expire_leases did.
struct LeaseExpiry {
  std::int64_t returned = 0;   // variants planned again, for any daemon to claim
  std::int64_t faulted = 0;    // variants that met the fault rule (below), recorded crashed
  std::int64_t unstarted = 0;  // of those returned: claimed, their work not begun (not counted)
};

// A lease's terms: how long a claim lasts without a heartbeat.
inline constexpr std::int64_t kDefaultLeaseMs = 30000;
// The fault rule (db/lease_store.cpp): a variant whose lease expired this many times after its
// holder began its work, held by at least kLeaseOwnersToFault different daemons, is recorded as a
// fault, not planned again. No variant code runs inside a daemon (NVRTC and the GPU run in child
// processes), so a daemon's death is weak evidence against the variant it held: the rule only
// ends endless retries of a variant that keeps taking its daemons down.
inline constexpr int kLeaseExpiriesToFault = 3;
inline constexpr int kLeaseOwnersToFault = 2;

}  // namespace kt

namespace kt::db {

class ReadPool;
class StoreWriter;

// Store's fleet methods (db/store.hpp documents them) and the lease checks of the other parts.
class LeaseStore {
 public:
  LeaseStore(StoreWriter& writer, ReadPool& readers) : writer_(writer), readers_(readers) {}

  std::int64_t register_daemon(const std::string& host, int pid, const std::string& gpus_json,
                               std::int64_t lease_ms);
  std::optional<std::int64_t> daemon_id() const;
  std::vector<DaemonRecord> daemons();
  void heartbeat();
  LeaseExpiry expire_leases();
  void begin_variant_work(std::int64_t variant_id);
  std::vector<VariantRecord> claim_variants(std::int64_t job_id, int limit);
  bool claim_variant(std::int64_t variant_id);
  std::int64_t leased_elsewhere(std::int64_t job_id);
  void release_leases();

  // The registered daemon's id; registers one for this host and process if none.
  std::int64_t ensure_daemon();
  // Throws LeaseLost when a write for the variant would not be the lease holder's (see
  // Store::register_daemon). The caller holds the writer, inside its write transaction.
  void require_lease(std::int64_t variant_id);

 private:
  StoreWriter& writer_;
  ReadPool& readers_;
  // The registered daemon's id, or 0; set under the writer's mutex.
  std::atomic<std::int64_t> daemon_id_{0};
  std::int64_t lease_ms_ = kDefaultLeaseMs;
};

}  // namespace kt::db
