// Where a job's gates meet the store: the runner hands over what the compile and GPU steps
// returned and these record it. Only the runner calls them, so it is the one writer of a job's
// variants. A variant whose lease this daemon lost (db/lease_store.cpp) throws LeaseLost.
#pragma once

#include "db/store.hpp"
#include "engine/job_compile.hpp"
#include "engine/job_gpu_steps.hpp"

namespace kt {

// A newly compiled kernel into the compile cache; the compile's log and resources (registers,
// spills, static + dynamic smem, threads) on the variant; and, when the variant stopped at a
// compile gate, its outcome.
void record_compiled(Store& store, const CompiledVariant& cv);

// The resources of the loaded kernel, the worker's verdict (with the Pareto front, in the store),
// and which GPU took how long.
void record_measured(Store& store, const MeasuredVariant& measured);

}  // namespace kt
