#include "db/connection.hpp"

#include "db/postgresql_connection.hpp"
#include "db/sqlite_connection.hpp"

namespace kt::db {

bool is_postgresql_uri(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::string redacted_location(std::string_view location) {
  std::string text(location);
  if (!is_postgresql_uri(text)) return text;
  // scheme://user:password@host...: the password is between the first ':' after the scheme and
  // the '@' that ends the user part.
  const std::size_t user = text.find("://") + 3;
  const std::size_t at = text.find('@', user);
  const std::size_t colon = text.find(':', user);
  if (at != std::string::npos && colon != std::string::npos && colon < at)
    text.replace(colon + 1, at - colon - 1, "***");
  const std::size_t password = text.find("password=");
  if (password != std::string::npos) {
    const std::size_t end = text.find('&', password);
    text.replace(password + 9, end == std::string::npos ? std::string::npos : end - password - 9,
                 "***");
  }
  return text;
}

std::unique_ptr<Connection> open_connection(const std::string& location, Access access,
                                            std::shared_ptr<StoreHealth> health) {
  if (is_postgresql_uri(location)) return open_postgresql(location, access, std::move(health));
  return open_sqlite(location, access, std::move(health));
}

}  // namespace kt::db
