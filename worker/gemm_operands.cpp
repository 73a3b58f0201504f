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

cudaDataType_t fp8_data_type(const std::string& dtype, const std::string& kind) {
  if (dtype == "e4m3") return CUDA_R_8F_E4M3;
  if (dtype == "e5m2") return CUDA_R_8F_E5M2;
  throw std::invalid_argument(kind + " takes e4m3 or e5m2 data, not '" + dtype + "'");
}

void require_elements(const BufferInstance& buffer, std::int64_t needed, const std::string& kind) {
  if (buffer.elements < needed)
    throw std::invalid_argument(kind + ": buffer '" + buffer.name + "' holds " +
                                std::to_string(buffer.elements) + " elements, needs " +
                                std::to_string(needed));
}

void require_f32(const BufferInstance& buffer, const std::string& kind) {
  if (buffer.dtype != "f32")
    throw std::invalid_argument(kind + ": scale buffer '" + buffer.name + "' must be f32, not '" +
                                buffer.dtype + "'");
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

Fp8GemmOperands fp8_gemm_operands(const nlohmann::json& params, const ProblemBuffers& buffers,
                                  const std::string& kind) {
  Fp8GemmOperands g;
  const std::string a = buffer_param(params, "a", kind), b = buffer_param(params, "b", kind);
  g.c_name = buffer_param(params, "c", kind);
  g.scale_a_name = buffer_param(params, "scale_a", kind);
  g.scale_b_name = buffer_param(params, "scale_b", kind);
  g.m = dim_param(params, "m", kind);
  g.n = dim_param(params, "n", kind);
  g.k = dim_param(params, "k", kind);
  // true/false, or 0/1: the manifest's expression (e.g. "BLOCK_SCALED") evaluated for the shape.
  if (params.contains("block_scaled")) {
    const nlohmann::json& flag = params["block_scaled"];
    if (flag.is_boolean())
      g.block_scaled = flag.get<bool>();
    else if (flag.is_number_integer() &&
             (flag.get<std::int64_t>() == 0 || flag.get<std::int64_t>() == 1))
      g.block_scaled = flag.get<std::int64_t>() == 1;
    else
      throw std::invalid_argument(kind + " param 'block_scaled' must be true, false, 0 or 1");
  }
  g.a_dtype = buffers.spec(a).dtype;
  g.b_dtype = buffers.spec(b).dtype;
  g.c_dtype = buffers.spec(g.c_name).dtype;
  g.a_type = fp8_data_type(g.a_dtype, kind);
  g.b_type = fp8_data_type(g.b_dtype, kind);
  g.output_type = half_data_type(g.c_dtype, kind);
  require_elements(buffers.spec(a), std::int64_t{g.m} * g.k, kind);
  require_elements(buffers.spec(b), std::int64_t{g.n} * g.k, kind);
  require_elements(buffers.spec(g.c_name), std::int64_t{g.m} * g.n, kind);
  const BufferInstance& scale_a = buffers.spec(g.scale_a_name);
  const BufferInstance& scale_b = buffers.spec(g.scale_b_name);
  require_f32(scale_a, kind);
  require_f32(scale_b, kind);
  const std::int64_t k_blocks = (std::int64_t{g.k} + 127) / 128;
  require_elements(scale_a, g.block_scaled ? k_blocks * g.m : 1, kind);
  require_elements(scale_b, g.block_scaled ? (std::int64_t{g.n} + 127) / 128 * k_blocks : 1, kind);
  g.a = buffers.pointer(a);
  g.b = buffers.pointer(b);
  g.c = buffers.pointer(g.c_name);
  g.scale_a = buffers.pointer(g.scale_a_name);
  g.scale_b = buffers.pointer(g.scale_b_name);
  return g;
}

}  // namespace kt
