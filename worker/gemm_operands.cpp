#include "worker/gemm_operands.hpp"

#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace kt {
namespace {

std::string buffer_param(const nlohmann::json& params, const char* field, const std::string& kind) {
  if (!params.contains(field) || !params[field].is_string())
    throw std::invalid_argument(kind + " param '" + field + "' must name a buffer");
  return params[field].get<std::string>();
}

// An integral number in [1, 2^31) (an evaluated expression may arrive as 4096.0).
int dim_param(const nlohmann::json& params, const char* field, const std::string& kind) {
  const bool integral = params.contains(field) && params[field].is_number() &&
                        params[field].get<double>() == std::floor(params[field].get<double>());
  if (!integral) throw std::invalid_argument(kind + " param '" + field + "' must be an integer");
  const double value = params[field].get<double>();
  if (value < 1 || value > INT_MAX)
    throw std::invalid_argument(kind + " param '" + field + "' = " + std::to_string(value) +
                                " is outside [1, 2^31)");
  return static_cast<int>(value);
}

cudaDataType_t half_data_type(const std::string& dtype, const std::string& kind) {
  if (dtype == "bf16") return CUDA_R_16BF;
  if (dtype == "fp16") return CUDA_R_16F;
  throw std::invalid_argument(kind + " takes bf16 or fp16 data, not '" + dtype + "'");
}

void require_elements(const BufferInstance& buffer, std::int64_t needed, const std::string& kind) {
  if (buffer.elements < needed)
    throw std::invalid_argument(kind + ": buffer '" + buffer.name + "' holds " +
                                std::to_string(buffer.elements) + " elements, needs " +
                                std::to_string(needed));
}

}  // namespace

GemmOperands gemm_operands(const nlohmann::json& params, const ProblemBuffers& buffers,
                           const std::string& kind) {
  GemmOperands g;
  const std::string a = buffer_param(params, "a", kind), b = buffer_param(params, "b", kind);
  g.c_name = buffer_param(params, "c", kind);
  g.m = dim_param(params, "m", kind);
  g.n = dim_param(params, "n", kind);
  g.k = dim_param(params, "k", kind);
  g.input_type = half_data_type(buffers.spec(a).dtype, kind);
  if (buffers.spec(b).dtype != buffers.spec(a).dtype)
    throw std::invalid_argument(kind + ": A and B have different dtypes");
  g.output_type = half_data_type(buffers.spec(g.c_name).dtype, kind);
  require_elements(buffers.spec(a), std::int64_t{g.m} * g.k, kind);
  require_elements(buffers.spec(b), std::int64_t{g.n} * g.k, kind);
  require_elements(buffers.spec(g.c_name), std::int64_t{g.m} * g.n, kind);
  g.a = buffers.pointer(a);
  g.b = buffers.pointer(b);
  g.c = buffers.pointer(g.c_name);
  return g;
}

DualGemmOperands dual_gemm_operands(const nlohmann::json& params, const ProblemBuffers& buffers,
                                    const std::string& kind) {
  DualGemmOperands d;
  const std::string a = buffer_param(params, "a", kind);
  const std::string b1 = buffer_param(params, "b1", kind), b2 = buffer_param(params, "b2", kind);
  d.c_name = buffer_param(params, "c", kind);
  d.g = dim_param(params, "g", kind);
  d.m = dim_param(params, "m", kind);
  d.n = dim_param(params, "n", kind);
  d.k = dim_param(params, "k", kind);
  d.input_type = half_data_type(buffers.spec(a).dtype, kind);
  if (buffers.spec(b1).dtype != buffers.spec(a).dtype ||
      buffers.spec(b2).dtype != buffers.spec(a).dtype)
    throw std::invalid_argument(kind + ": A, B1 and B2 have different dtypes");
  d.output_dtype = buffers.spec(d.c_name).dtype;
  d.output_type = half_data_type(d.output_dtype, kind);
  require_elements(buffers.spec(a), std::int64_t{d.g} * d.m * d.k, kind);
  require_elements(buffers.spec(b1), std::int64_t{d.g} * d.n * d.k, kind);
  require_elements(buffers.spec(b2), std::int64_t{d.g} * d.n * d.k, kind);
  require_elements(buffers.spec(d.c_name), std::int64_t{d.g} * d.m * d.n, kind);
  d.a = buffers.pointer(a);
  d.b1 = buffers.pointer(b1);
  d.b2 = buffers.pointer(b2);
  d.c = buffers.pointer(d.c_name);
  return d;
}

}  // namespace kt
