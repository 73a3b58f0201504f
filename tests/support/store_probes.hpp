// What the fleet tests submit and read back: the compile-mode job they share, one integer from the
// store by SQL, a job's progress through the compile gates and its end as a daemon answers them,
// and a daemon's /metrics.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "client/kerntune_client.hpp"

namespace kt::test {

// A compile-mode GEMM sweep of 256x256x256 bf16 for sm_90a (no GPU needed) of `budget` variants.
JobSpec gemm_compile_job(std::int64_t budget);

// Polls the job until it is no longer queued or running, or the limit passes: its last answer
// (null if none came; an error answer, such as 503 while the store is away, is polled again).
nlohmann::json wait_for_job_end(const Client& client, std::int64_t job, std::chrono::seconds limit);

// The first column of the first row of `sql`, read on a connection of its own to `uri`; throws
// when there is no row.
std::int64_t query_int(const std::string& uri, const std::string& sql);

// The job's variants through the compile gates (compiled, compile_error, resource_exceeded) as
// the daemon answers (pruned ones count as finished from the start), or -1 when it does not.
std::int64_t gated_variants(const Client& client, std::int64_t job);

// GET /metrics of the daemon at `url`, as text.
std::string scrape_metrics(const std::string& url);

// The value of one sample ("name" or "name{labels}", as written) of a /metrics text; throws
// std::runtime_error naming it when the text has no such sample.
double metric_value(const std::string& exposition, const std::string& sample);

}  // namespace kt::test
