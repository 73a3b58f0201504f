// kt::db::FamilyRegistrationStore: registrations (POST /v1/families) from the upload to the
// outcome, so that a poll after a restart gets the real answer and a restarted daemon compiles
// again what it was compiling.
#include "db/family_registration_store.hpp"

#include <mutex>
#include <stdexcept>
#include <string>

#include "db/connection.hpp"
#include "db/lease_store.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {
namespace {

FamilyRegistrationRecord::Status read_status(const std::string& text) {
  if (const auto status = registration_status_from_string(text)) return *status;
  throw std::runtime_error("family registration status '" + text.substr(0, 40) + "' is unknown");
}

}  // namespace

void FamilyRegistrationStore::create_family_registration(
    const FamilyRegistrationRecord& registration) {
  std::lock_guard lock(writer_.mutex());
  writer_.mutex().touches_no_answer();  // registrations are read from the store each time
  db::with_context("create_family_registration " + registration.family, [&] {
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    {
      db::Statement insert(writer_.db(),
                           "INSERT INTO family_registrations (id, family, source_hash,"
                           " previous_hash, status, message, compile_json, manifest_json,"
                           " sources_json, daemon_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?,"
                           " ?, ?, ?, " +
                               db::now_sql(writer_.db().dialect()) + ")");
      insert.bind(1, registration.id);
      insert.bind(2, registration.family);
      insert.bind(3, registration.source_hash);
      insert.bind(4, registration.previous_hash);
      insert.bind(5, std::string(to_string(registration.status)));
      insert.bind(6, registration.message);
      insert.bind(7, registration.compile_json);
      insert.bind(8, registration.manifest_json);
      insert.bind(9, db::sources_to_json(registration.sources));
      if (const auto daemon = leases_.daemon_id())
        insert.bind(10, *daemon);
      else
        insert.bind_null(10);
      insert.exec();
    }
    transaction.commit();
  });
}

std::optional<FamilyRegistrationRecord> FamilyRegistrationStore::family_registration(
    const std::string& id) {
  const auto reader = readers_.acquire();
  return db::with_context("family_registration", [&]() -> std::optional<FamilyRegistrationRecord> {
    db::Statement query(*reader,
                        "SELECT id, family, source_hash, previous_hash, status, message,"
                        " compile_json FROM family_registrations WHERE id = ?");
    query.bind(1, id);
    if (!query.step()) return std::nullopt;
    FamilyRegistrationRecord registration;
    registration.id = query.column(0).text();
    registration.family = query.column(1).text();
    registration.source_hash = query.column(2).text();
    registration.previous_hash = query.column(3).text();
    registration.status = read_status(query.column(4).text());
    registration.message = query.column(5).text();
    registration.compile_json = query.column(6).text();
    return registration;
  });
}

std::vector<FamilyRegistrationRecord> FamilyRegistrationStore::claim_family_registrations() {
  const std::int64_t owner = leases_.ensure_daemon();
  std::lock_guard lock(writer_.mutex());
  writer_.mutex().touches_no_answer();
  return db::with_context("claim_family_registrations", [&] {
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    std::vector<FamilyRegistrationRecord> claimed;
    {
      // Held by no daemon, or by one that stopped or missed its heartbeats (on SQLite every
      // other daemon is stopped once this one registered).
      db::Statement query(
          writer_.db(),
          "SELECT id, family, source_hash, previous_hash, manifest_json, sources_json"
          " FROM family_registrations r WHERE status = 'compiling' AND (daemon_id IS NULL OR"
          " (daemon_id <> ?1 AND NOT EXISTS (SELECT 1 FROM daemons d WHERE d.id = r.daemon_id"
          " AND d.stopped = 0 AND " +
              db::now_ms_sql(writer_.db().dialect()) +
              " - d.heartbeat_ms <= d.lease_ms))) ORDER BY seq" +
              db::claim_rows_sql(writer_.db().dialect()));
      query.bind(1, owner);
      while (query.step()) {
        FamilyRegistrationRecord registration;
        registration.id = query.column(0).text();
        registration.family = query.column(1).text();
        registration.source_hash = query.column(2).text();
        registration.previous_hash = query.column(3).text();
        registration.manifest_json = query.column(4).text();
        registration.sources = db::sources_from_json(query.column(5).text());
        claimed.push_back(std::move(registration));
      }
    }
    {
      db::Statement hold(writer_.db(),
                         "UPDATE family_registrations SET daemon_id = ? WHERE id = ?");
      for (const FamilyRegistrationRecord& registration : claimed) {
        hold.bind(1, owner);
        hold.bind(2, registration.id);
        hold.exec();
        hold.reset();
      }
    }
    transaction.commit();
    return claimed;
  });
}

void FamilyRegistrationStore::finish_family_registration(const FamilyRegistrationRecord& outcome) {
  std::lock_guard lock(writer_.mutex());
  writer_.mutex().touches_no_answer();
  db::with_context("finish_family_registration " + outcome.family, [&] {
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    {
      db::Statement update(
          writer_.db(),
          "UPDATE family_registrations SET status = ?, message = ?,"
          " compile_json = ?, previous_hash = ?, source_hash = ?, manifest_json = '',"
          " sources_json = '', daemon_id = NULL, finished_at = " +
              db::now_sql(writer_.db().dialect()) + " WHERE id = ?");
      update.bind(1, std::string(to_string(outcome.status)));
      update.bind(2, outcome.message);
      update.bind(3, outcome.compile_json);
      update.bind(4, outcome.previous_hash);
      update.bind(5, outcome.source_hash);
      update.bind(6, outcome.id);
      update.exec();
    }
    {  // The newest finished ones are kept; clients poll soon after they register.
      db::Statement prune(writer_.db(),
                          "DELETE FROM family_registrations WHERE status <> 'compiling' AND"
                          " seq <= (SELECT seq FROM family_registrations WHERE status <>"
                          " 'compiling' ORDER BY seq DESC LIMIT 1 OFFSET ?)");
      prune.bind(1, static_cast<std::int64_t>(kKeptFamilyRegistrations));
      prune.exec();
    }
    transaction.commit();
  });
}

}  // namespace kt::db
