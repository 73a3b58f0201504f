// A tuned problem as the read queries name it (GET /v1/best, /v1/pareto, /v1/tuned): a family,
// dtype and shape on a GPU model, or on any model.
#pragma once

#include <optional>
#include <string>

#include "db/store.hpp"
#include "tuner/family.hpp"

namespace kt {

struct ProblemQuery {
  const Family* family = nullptr;
  std::string dtype;
  Shape shape;
  std::string shape_key;    // canonical_key(shape)
  std::string device_name;  // "" = any device model
};

// A device selector resolved against every device the store has seen (it outlives the GPUs of
// this host): the model of the GPU it selects; an unmatched selector is taken as a model name as
// written. "" stays "" (any model).
std::string device_model_of(Store& store, const std::string& selector);

// An unfinished tune job of the problem, if one is queued or running: asking again does not queue
// the same work twice.
std::optional<JobRecord> unfinished_tune_job(Store& store, const ProblemQuery& problem);

}  // namespace kt
