// What the server fuzzers run against: one AppContext per fuzzer process, built as kerntuned
// builds it (a Store on a temporary file, the shipped families, two fake H100s) except that the
// JobScheduler is never started, so POST /v1/jobs stores and queues a job and nothing compiles or
// runs. The store starts with one finished tune job (job 1: variants 1-3, a kernel, a Pareto
// front) so that GET routes find something; jobs the fuzzer creates accumulate for the process.
#pragma once

#include "server/app_context.hpp"

namespace kt::fuzz {

// Built on first use, removed (temporary folder included) when the process exits normally.
AppContext& app_context();

}  // namespace kt::fuzz
