// A batch (POST /v1/batches) as the CLI shows it: the one progress line of `kerntune tune-all`,
// the table of each problem's state and answer, and `kerntune batch [ID] [--cancel]`.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "client/cli_context.hpp"

namespace kt {

// "gemm M=64 N=4096 K=4096 bf16" of a batch's problem.
std::string batch_problem_label(const nlohmann::json& problem);
// tuned, refused, or its job's status.
std::string batch_problem_state(const nlohmann::json& problem);
// "ours 12.3 us, 1.08x [1.05, 1.10] vs cublasLt", "baseline 9.1 us (cublasLt)", or why none.
std::string batch_problem_answer(const nlohmann::json& problem);

// "[####......] 3/8 problems  job 14 gemm M=2048 N=4096 K=4096 bf16 40/64 variants  2m05s"
std::string batch_progress_line(const nlohmann::json& batch, double elapsed_s);

// PROBLEM SHARE JOB STATE ANSWER, one row a problem in the batch's order.
void print_batch_table(std::ostream& out, const nlohmann::json& batch);
// {"batch", "device", "status", "problems": [{family, shape, dtype, share, job_id, state,
// answer}]}: what `--json` prints.
nlohmann::json batch_summary(const nlohmann::json& batch);

struct BatchArgs {
  std::int64_t id = 0;  // 0: list the newest batches
  bool cancel = false;
};

// `kerntune batch`: the newest batches; `kerntune batch ID`: one, problem by problem;
// `--cancel`: cancels its unfinished jobs. 0, or 2 for a batch that ended with a problem untuned.
int run_batch(const CliContext& ctx, const BatchArgs& args);

}  // namespace kt
