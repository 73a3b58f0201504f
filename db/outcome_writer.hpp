// Internal to db/: writing a variant's outcome (its status, measurement, place on the Pareto front,
// the job's fastest variant and its convergence), for record_outcome and for a lease's fault.
// Callers hold the writer's mutex and an open write transaction.
#pragma once

#include <cstdint>

#include "db/model.hpp"
#include "db/store_writer.hpp"

namespace kt::db {

void write_outcome(StoreWriter& writer, std::int64_t variant_id, const VariantOutcome& outcome);

}  // namespace kt::db
