// What a family's speedups are measured against, for the API (GET /v1/families, the job view,
// GET /v1/best): the rule is the tuner's (tuner/family_baseline.hpp); the server renders it.
#pragma once

#include <string>

#include "tuner/family.hpp"

namespace kt {

struct BaselineSummary {
  std::string kind;  // the baseline's kind; "reference" for a family without a baseline
  std::string description;
  bool in_process = false;  // false: nothing timed in-process, speedups stay null
};

BaselineSummary baseline_summary_of(const Family& family);

}  // namespace kt
