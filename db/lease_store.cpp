// kt::db::LeaseStore: the fleet. Daemons sharing one database register (host, pid, GPUs, lease
// length) and claim a job's planned variants with leases: an owner and an expiry by the database's
// clock, extended by the owner's heartbeat. A variant's results are written only by its lease
// holder; an expired lease sends the variant back to planned. The holder marks when it begins a
// variant's work (begin_variant_work); a variant that was merely claimed in a batch by a daemon
// that died goes back without a count.
//
// The fault rule. A daemon runs no variant code: NVRTC runs in its compile processes and kernels
// in its measurement workers, and a variant that crashes either is recorded by the daemon as that
// variant's outcome (crashed, hang, ...). So a daemon that dies holding a begun variant says
// little about that variant: it was killed, lost its host, or hit a bug of its own. Random kills
// of two daemons recorded 4-5 innocent variants per 20 kills as faults when two such expiries
// were enough (bench/results/2026-11-27-fleet-kills-work-began/). What remains is a guard against
// endless retries, should some variant keep taking its daemons down (e.g. through a bug in the
// daemon's handling of its result): the variant is recorded crashed (gate lease) only when its
// lease expired with its work begun kLeaseExpiriesToFault (3) times, under at least
// kLeaseOwnersToFault (2) different daemons (a restarted daemon registers anew, so one host's
// restart loop counts too; one registration whose lease lapsed while it lived, e.g. through a
// database outage, does not count twice). Every expiry, counted or not, is in lease_history.
#include "db/lease_store.hpp"

#include <unistd.h>
#include <algorithm>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "db/connection.hpp"
#include "db/dialect.hpp"
#include "db/outcome_writer.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {
namespace {

std::string this_host() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::string describe_daemon(db::Connection& db, std::int64_t id) {
  db::Statement query(db, "SELECT host, pid FROM daemons WHERE id = ?");
  query.bind(1, id);
  if (!query.step()) return "daemon " + std::to_string(id);
  return "daemon " + std::to_string(id) + " (" + query.column(0).text() + ", pid " +
         std::to_string(query.column(1).int64()) + ")";
}

// Whose leases a clean hand-back returns: a stopping daemon's own, or (a daemon starting on an
// SQLite file, which one daemon owns) every earlier daemon's.
enum class Holders { this_daemon, every_other_daemon };

// The holders' leases go back to planned without counting as expiries (no daemon died holding
// them), and the holders are marked stopped.
void release_leases_of(db::Connection& db, std::int64_t daemon_id, Holders holders) {
  const std::string whose = holders == Holders::this_daemon ? " = ?" : " <> ?";
  db::Statement release(db,
                        "UPDATE variants SET lease_owner = NULL, lease_expires_ms = NULL,"
                        " work_began_ms = NULL WHERE lease_owner" +
                            whose);
  release.bind(1, daemon_id);
  release.exec();
  db::Statement stopped(db, "UPDATE daemons SET stopped = 1 WHERE id" + whose);
  stopped.bind(1, daemon_id);
  stopped.exec();
}

// "3 7 7" (lease_expiry_owners) -> how many different daemons.
std::size_t distinct_owners(const std::string& owners) {
  std::istringstream ids(owners);
  return std::set<std::int64_t>(std::istream_iterator<std::int64_t>(ids), {}).size();
}

bool meets_fault_rule(std::int64_t counted_expiries, std::size_t owners) {
  return counted_expiries >= kLeaseExpiriesToFault &&
         owners >= static_cast<std::size_t>(kLeaseOwnersToFault);
}

}  // namespace

std::int64_t LeaseStore::register_daemon(const std::string& host, int pid,
                                         const std::string& gpus_json, std::int64_t lease_ms) {
  if (lease_ms < 1) throw std::invalid_argument("a lease lasts at least 1 ms");
  std::lock_guard lock(writer_.mutex());
  return db::with_context("register_daemon", [&] {
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    const std::string now_ms = db::now_ms_sql(writer_.db().dialect());
    db::Statement insert(writer_.db(),
                         "INSERT INTO daemons (host, pid, gpus_json, lease_ms, started_at,"
                         " heartbeat_ms) VALUES (?, ?, ?, ?, " +
                             db::now_sql(writer_.db().dialect()) + ", " + now_ms +
                             ") RETURNING id");
    insert.bind(1, host);
    insert.bind(2, pid);
    insert.bind(3, gpus_json);
    insert.bind(4, lease_ms);
    if (!insert.step()) throw std::runtime_error("insert returned no daemon id");
    const std::int64_t id = insert.column(0).int64();
    insert.step();
    // One daemon per SQLite file: whoever held leases before is gone, and this one resumes.
    if (writer_.db().dialect() == db::Dialect::sqlite)
      release_leases_of(writer_.db(), id, Holders::every_other_daemon);
    transaction.commit();
    lease_ms_ = lease_ms;
    daemon_id_ = id;
    return id;
  });
}

std::optional<std::int64_t> LeaseStore::daemon_id() const {
  const std::int64_t id = daemon_id_.load();
  if (id == 0) return std::nullopt;
  return id;
}

std::int64_t LeaseStore::ensure_daemon() {
  if (const std::int64_t id = daemon_id_.load(); id != 0) return id;
  return register_daemon(this_host(), static_cast<int>(getpid()), "[]", lease_ms_);
}

std::vector<DaemonRecord> LeaseStore::daemons() {
  const auto reader = readers_.acquire();
  return db::with_context("daemons", [&] {
    db::Statement query(*reader, "SELECT id, host, pid, gpus_json, lease_ms, started_at, " +
                                     db::now_ms_sql((*reader).dialect()) +
                                     " - heartbeat_ms, stopped FROM daemons ORDER BY id");
    std::vector<DaemonRecord> out;
    while (query.step()) {
      DaemonRecord d;
      d.id = query.column(0).int64();
      d.host = query.column(1).text();
      d.pid = query.column(2).integer();
      d.gpus_json = query.column(3).text();
      d.lease_ms = query.column(4).int64();
      d.started_at = query.column(5).text();
      d.heartbeat_age_ms = query.column(6).int64();
      d.stopped = query.column(7).int64() != 0;
      d.alive = !d.stopped && d.heartbeat_age_ms <= d.lease_ms;
      out.push_back(std::move(d));
    }
    return out;
  });
}

void LeaseStore::heartbeat() {
  const std::int64_t id = daemon_id_.load();
  if (id == 0) return;
  std::lock_guard lock(writer_.mutex());
  db::with_context("heartbeat", [&] {
    writer_.mutex().touches_no_answer();
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    const std::string now_ms = db::now_ms_sql(writer_.db().dialect());
    db::Statement beat(writer_.db(),
                       "UPDATE daemons SET heartbeat_ms = " + now_ms + " WHERE id = ?");
    beat.bind(1, id);
    beat.exec();
    db::Statement extend(writer_.db(), "UPDATE variants SET lease_expires_ms = " + now_ms +
                                           " + ?2 WHERE lease_owner = ?1 AND status = 'pending'");
    extend.bind(1, id);
    extend.bind(2, lease_ms_);
    extend.exec();
    transaction.commit();
  });
}

LeaseExpiry LeaseStore::expire_leases() {
  std::lock_guard lock(writer_.mutex());
  return db::with_context("expire_leases", [&] {
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    LeaseExpiry expiry;
    struct Expired {
      std::int64_t id, owner, expiries;
      std::string history, owners;
      bool work_began;
    };
    std::vector<Expired> expired;
    {
      db::Statement query(writer_.db(),
                          "SELECT id, lease_owner, lease_expiries, lease_history, work_began_ms,"
                          " lease_expiry_owners FROM variants WHERE lease_owner IS NOT NULL AND "
                          "lease_expires_ms < " +
                              db::now_ms_sql(writer_.db().dialect()) + " AND status = 'pending'" +
                              db::claim_rows_sql(writer_.db().dialect()));
      while (query.step())
        expired.push_back({query.column(0).int64(), query.column(1).int64(),
                           query.column(2).int64(), query.column(3).text(), query.column(5).text(),
                           !query.column(4).is_null()});
    }
    if (expired.empty()) {
      writer_.mutex().touches_no_answer();
      return expiry;
    }
    db::Statement back(writer_.db(),
                       "UPDATE variants SET lease_owner = NULL, lease_expires_ms = NULL,"
                       " work_began_ms = NULL, lease_expiries = ?2, lease_history = ?3,"
                       " lease_expiry_owners = ?4 WHERE id = ?1");
    for (const Expired& e : expired) {
      // Every expiry is in the history; only one of begun work counts toward the fault rule.
      const std::int64_t expiries = e.expiries + (e.work_began ? 1 : 0);
      const std::string history = (e.history.empty() ? "" : e.history + "; ") +
                                  describe_daemon(writer_.db(), e.owner) +
                                  (e.work_began ? "" : " before beginning it");
      back.bind(1, e.id);
      back.bind(2, expiries);
      const std::string owners =
          e.work_began ? (e.owners.empty() ? "" : e.owners + " ") + std::to_string(e.owner)
                       : e.owners;
      back.bind(3, history);
      back.bind(4, owners);
      back.exec();
      back.reset();
      if (!e.work_began) ++expiry.unstarted;
      const std::size_t daemons = distinct_owners(owners);
      if (!meets_fault_rule(expiries, daemons)) {
        ++expiry.returned;
        continue;
      }
      VariantOutcome fault;
      fault.status = VariantStatus::crashed;
      fault.failed_gate = "lease";
      fault.reason = "its lease expired " + std::to_string(expiries) +
                     " times with its work begun, " + "under " + std::to_string(daemons) +
                     " different daemons that died holding it (" + history +
                     "); recorded as a fault, not retried";
      db::write_outcome(writer_, e.id, fault);
      ++expiry.faulted;
    }
    transaction.commit();
    return expiry;
  });
}

std::vector<VariantRecord> LeaseStore::claim_variants(std::int64_t job_id, int limit) {
  if (limit < 1) return {};
  const std::int64_t owner = ensure_daemon();
  expire_leases();
  std::lock_guard lock(writer_.mutex());
  return db::with_context("claim_variants for job " + std::to_string(job_id), [&] {
    writer_.mutex().touches_job(job_id);  // the lease columns are no answer's, but keep it simple
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    db::Statement claim(writer_.db(),
                        "UPDATE variants SET lease_owner = ?1, lease_expires_ms = " +
                            db::now_ms_sql(writer_.db().dialect()) +
                            " + ?2 WHERE id IN (SELECT id FROM variants WHERE job_id = ?3"
                            " AND status = 'pending' AND lease_owner IS NULL ORDER BY id"
                            " LIMIT ?4" +
                            db::claim_rows_sql(writer_.db().dialect()) + ") RETURNING id");
    claim.bind(1, owner);
    claim.bind(2, lease_ms_);
    claim.bind(3, job_id);
    claim.bind(4, limit);
    std::vector<std::int64_t> ids;
    while (claim.step()) ids.push_back(claim.column(0).int64());
    std::sort(ids.begin(), ids.end());
    std::vector<VariantRecord> claimed;
    for (const std::int64_t id : ids)
      if (auto variant = db::load_variant(writer_.db(), id)) claimed.push_back(std::move(*variant));
    transaction.commit();
    return claimed;
  });
}

bool LeaseStore::claim_variant(std::int64_t variant_id) {
  const std::int64_t owner = ensure_daemon();
  expire_leases();
  std::lock_guard lock(writer_.mutex());
  return db::with_context("claim_variant " + std::to_string(variant_id), [&] {
    writer_.mutex().touches_no_answer();
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    db::Statement claim(writer_.db(), "UPDATE variants SET lease_owner = ?1, lease_expires_ms = " +
                                          db::now_ms_sql(writer_.db().dialect()) +
                                          " + ?2 WHERE id = ?3 AND status = 'pending'"
                                          " AND (lease_owner IS NULL OR lease_owner = ?1)");
    claim.bind(1, owner);
    claim.bind(2, lease_ms_);
    claim.bind(3, variant_id);
    const bool claimed = claim.exec() == 1;
    transaction.commit();
    return claimed;
  });
}

void LeaseStore::begin_variant_work(std::int64_t variant_id) {
  const std::int64_t id = daemon_id_.load();
  if (id == 0) return;
  std::lock_guard lock(writer_.mutex());
  db::with_context("begin_variant_work " + std::to_string(variant_id), [&] {
    writer_.mutex().touches_no_answer();
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    db::Statement begin(
        writer_.db(),
        "UPDATE variants SET work_began_ms = " + db::now_ms_sql(writer_.db().dialect()) +
            " WHERE id = ?1 AND lease_owner = ?2 AND status = 'pending'");
    begin.bind(1, variant_id);
    begin.bind(2, id);
    // Not this daemon's lease: LeaseLost, unless no daemon holds the planned variant (a direct
    // write, as require_lease allows; there is no lease whose expiry could count then).
    if (begin.exec() == 0) require_lease(variant_id);
    transaction.commit();
  });
}

std::int64_t LeaseStore::leased_elsewhere(std::int64_t job_id) {
  const auto reader = readers_.acquire();
  return db::with_context("leased_elsewhere for job " + std::to_string(job_id), [&] {
    db::Statement query(*reader,
                        "SELECT COUNT(*) FROM variants WHERE job_id = ?1"
                        " AND status = 'pending' AND lease_owner IS NOT NULL"
                        " AND lease_owner <> ?2");
    query.bind(1, job_id);
    query.bind(2, daemon_id_.load());
    return query.step() ? query.column(0).int64() : 0;
  });
}

void LeaseStore::release_leases() {
  const std::int64_t id = daemon_id_.load();
  if (id == 0) return;
  std::lock_guard lock(writer_.mutex());
  db::with_context("release_leases", [&] {
    writer_.mutex().touches_no_answer();
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    release_leases_of(writer_.db(), id, Holders::this_daemon);
    transaction.commit();
  });
}

void LeaseStore::require_lease(std::int64_t variant_id) {
  const std::int64_t id = daemon_id_.load();
  if (id == 0) return;
  db::Statement query(writer_.db(), "SELECT lease_owner, status FROM variants WHERE id = ?");
  query.bind(1, variant_id);
  if (!query.step())
    throw std::invalid_argument("variant " + std::to_string(variant_id) + " does not exist");
  const db::Column owner = query.column(0);
  const std::string status = query.column(1).text();
  if (!owner.is_null() && owner.int64() == id) return;
  // A planned variant that no daemon holds may be written (a tool's or a test's direct write);
  // what another daemon holds, or what already has its outcome, may not.
  if (owner.is_null() && status == "pending") return;
  throw LeaseLost("variant " + std::to_string(variant_id) + ": daemon " + std::to_string(id) +
                  " no longer holds its lease (" +
                  (status != "pending" ? "it ended " + status
                                       : "daemon " + std::to_string(owner.int64()) + " holds it") +
                  "); nothing written");
}

}  // namespace kt::db
