// Internal to db/: the pause before a store operation that lost its database runs again.
#pragma once

#include "db/store_health.hpp"

namespace kt::db {

// Sleeps as health paces retry `attempt` (StoreHealth::wait_before_retry), with the store's writer
// lock released meanwhile when this thread holds it: other writes get their turn, so a fail-fast
// API write is answered 503 at once instead of queueing behind the whole outage, and whichever
// write first finds the database back ends it. False when waiting was given up.
bool wait_to_retry(StoreHealth& health, int attempt);

}  // namespace kt::db
