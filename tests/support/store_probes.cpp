#include "support/store_probes.hpp"

#include <exception>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "client/kerntune_client.hpp"
#include "db/connection.hpp"

namespace kt::test {

std::int64_t query_int(const std::string& uri, const std::string& sql) {
  auto db = db::open_connection(uri, db::Access::read);
  db::Statement query(*db, sql);
  if (!query.step()) throw std::runtime_error("no row from: " + sql);
  return query.column(0).int64();
}

std::int64_t gated_variants(const Client& client, std::int64_t job) {
  try {
    const nlohmann::json by_status = client.job(job).at("progress").at("by_status");
    std::int64_t gated = 0;
    for (const char* done : {"compiled", "compile_error", "resource_exceeded"})
      gated += by_status.value(done, std::int64_t{0});
    return gated;
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace kt::test
