#include "worker/output_check.hpp"

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "worker/driver_api.hpp"
#include "worker/validator.hpp"

namespace kt {
namespace {

std::size_t float_bytes(const Reference& reference) {
  return static_cast<std::size_t>(reference.output_elements()) * sizeof(float);
}

std::vector<float> download_floats(const cuda::DeviceBuffer& buffer, const Reference& reference) {
  std::vector<float> values(static_cast<std::size_t>(reference.output_elements()));
  buffer.copy_to_host(values.data(), values.size() * sizeof(float));
  return values;
}

}  // namespace

ReferenceResults compute_reference(Reference& reference, const Tolerance& tolerance,
                                   CUstream stream) {
  ReferenceResults results{cuda::DeviceBuffer(float_bytes(reference)), std::nullopt};
  reference.compute_f32(results.expected.get(), stream);
  if (tolerance.magnitude > 0) {
    if (!reference.magnitude())
      throw std::invalid_argument(fmt::format(
          "the tolerance has a magnitude term (c = {}) but the reference computes no magnitude",
          tolerance.magnitude));
    results.magnitude.emplace(float_bytes(reference));
    reference.compute_magnitude_f32(results.magnitude->get(), stream);
  }
  KT_CU(cuStreamSynchronize, stream);
  return results;
}

std::string guard_damage(const ProblemBuffers& buffers) {
  const std::vector<GuardDamage> damage = buffers.check_guards();
  if (damage.empty()) return "";
  std::string text = damage.front().describe();
  if (damage.size() > 1) text += fmt::format(" and {} more damaged guards", damage.size() - 1);
  return text;
}

ErrorSummary check_output(const ProblemBuffers& buffers, const Reference& reference,
                          const ReferenceResults& computed, const Tolerance& tolerance) {
  const std::string& name = reference.output_buffer();
  const std::vector<std::byte> output = buffers.download(name);
  const std::vector<float> wanted = download_floats(computed.expected, reference);
  std::vector<float> magnitude_values;
  std::optional<ReferenceMagnitude> magnitude;
  if (tolerance.magnitude > 0 && computed.magnitude) {
    const std::optional<Reference::Magnitude> what = reference.magnitude();
    if (!what) throw std::invalid_argument("the reference computes no magnitude");
    magnitude_values = download_floats(*computed.magnitude, reference);
    magnitude = ReferenceMagnitude{magnitude_values, what->reduction, what->what};
  }
  const std::string& dtype = buffers.spec(name).dtype;
  const std::size_t bytes = wanted.size() * buffer_element_bytes(dtype);
  // Without a magnitude here a tolerance that has a term throws in the comparison.
  ErrorSummary error =
      compare_with_reference(std::span(output).first(bytes), dtype, wanted, tolerance, magnitude);
  error.guard_damage = guard_damage(buffers);
  return error;
}

}  // namespace kt
