// Internal to db/: keeping the stored Pareto front of one problem (device model, family, dtype,
// shape) up to date. Callers hold the Store's mutex and an open write transaction.
#pragma once

#include "db/connection.hpp"
#include "db/store.hpp"

namespace kt::db {

// The front's resource objective: bytes of on-chip state one block holds, shared memory plus the
// register file it occupies (4 bytes per register per thread). Unknown (-1) parts count as 0.
double footprint_bytes(const VariantRecord& variant);

// Replaces the stored front of the job's problem with pareto_front(old front + variant's point).
// The variant must carry timing and error.
void add_to_front(db::Connection& db, const JobRecord& job, const VariantRecord& variant);

// Drops the variant's point from every front (before it is re-recorded).
void remove_from_front(db::Connection& db, std::int64_t variant_id);

}  // namespace kt::db
