// kt::db::RegisteredFamilyStore: the families clients registered over the API, every version kept,
// the newest served.
#include "db/registered_family_store.hpp"

#include <mutex>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "db/connection.hpp"
#include "db/read_pool.hpp"
#include "db/rows.hpp"
#include "db/store_writer.hpp"

namespace kt::db {

std::string sources_to_json(const std::vector<std::pair<std::string, std::string>>& sources) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, text] : sources) object[name] = text;
  return object.dump();
}

std::vector<std::pair<std::string, std::string>> sources_from_json(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> sources;
  if (text.empty()) return sources;
  const nlohmann::json parsed = nlohmann::json::parse(text);
  for (const auto& [name, source] : parsed.items())
    sources.emplace_back(name, source.get<std::string>());
  return sources;
}

std::int64_t RegisteredFamilyStore::save_registered_family(const RegisteredFamilyRecord& family) {
  std::lock_guard lock(
      writer_.mutex());  // no touches_*: the families every answer may read changed
  return db::with_context("save_registered_family " + family.name, [&] {
    db::Transaction transaction(writer_.db(), db::TransactionKind::write);
    // A version registered again becomes the newest: a new row, a larger id.
    db::Statement drop(writer_.db(),
                       "DELETE FROM registered_families WHERE name = ? AND source_hash = ?");
    drop.bind(1, family.name);
    drop.bind(2, family.source_hash);
    drop.exec();
    std::int64_t id = 0;
    {  // finished before the commit
      db::Statement insert(writer_.db(),
                           "INSERT INTO registered_families (name, source_hash, manifest_json,"
                           " sources_json, compile_json, created_at) VALUES (?, ?, ?, ?, ?, " +
                               db::now_sql(writer_.db().dialect()) + ") RETURNING id");
      insert.bind(1, family.name);
      insert.bind(2, family.source_hash);
      insert.bind(3, family.manifest_json);
      insert.bind(4, db::sources_to_json(family.sources));
      insert.bind(5, family.compile_json);
      if (!insert.step()) throw std::runtime_error("no id came back");
      id = insert.column(0).int64();
    }
    transaction.commit();
    return id;
  });
}

std::vector<RegisteredFamilyRecord> RegisteredFamilyStore::registered_families() {
  const auto reader = readers_.acquire();
  return db::with_context("registered_families", [&] {
    db::Statement query(*reader,
                        "SELECT f.id, f.name, f.source_hash, f.manifest_json, f.sources_json,"
                        " f.compile_json, f.created_at FROM registered_families f"
                        " WHERE f.id = (SELECT MAX(g.id) FROM registered_families g"
                        " WHERE g.name = f.name) ORDER BY f.name");
    std::vector<RegisteredFamilyRecord> families;
    while (query.step()) {
      RegisteredFamilyRecord family;
      family.id = query.column(0).int64();
      family.name = query.column(1).text();
      family.source_hash = query.column(2).text();
      family.manifest_json = query.column(3).text();
      family.sources = db::sources_from_json(query.column(4).text());
      family.compile_json = query.column(5).text();
      family.created_at = query.column(6).text();
      families.push_back(std::move(family));
    }
    return families;
  });
}

}  // namespace kt::db
