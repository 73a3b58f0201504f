// What the fleet tests read back: one integer from the store by SQL, and a job's progress through
// the compile gates as a daemon answers it.
#pragma once

#include <cstdint>
#include <string>

namespace kt {
class Client;
}

namespace kt::test {

// The first column of the first row of `sql`, read on a connection of its own to `uri`; throws
// when there is no row.
std::int64_t query_int(const std::string& uri, const std::string& sql);

// The job's variants through the compile gates (compiled, compile_error, resource_exceeded) as
// the daemon answers (pruned ones count as finished from the start), or -1 when it does not.
std::int64_t gated_variants(const Client& client, std::int64_t job);

}  // namespace kt::test
