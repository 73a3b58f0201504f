#include "worker/output_check.hpp"

#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "worker/validator.hpp"

namespace kt {

std::string guard_damage(const ProblemBuffers& buffers) {
  const std::vector<GuardDamage> damage = buffers.check_guards();
  if (damage.empty()) return "";
  std::string text = damage.front().describe();
  if (damage.size() > 1) text += fmt::format(" and {} more damaged guards", damage.size() - 1);
  return text;
}

ErrorSummary check_output(const ProblemBuffers& buffers, const Reference& reference,
                          const cuda::DeviceBuffer& expected, const Tolerance& tolerance) {
  const std::string& name = reference.output_buffer();
  const std::vector<std::byte> output = buffers.download(name);
  std::vector<float> wanted(static_cast<std::size_t>(reference.output_elements()));
  expected.copy_to_host(wanted.data(), wanted.size() * sizeof(float));
  const std::string& dtype = buffers.spec(name).dtype;
  const std::size_t bytes = wanted.size() * buffer_element_bytes(dtype);
  ErrorSummary error =
      compare_with_reference(std::span(output).first(bytes), dtype, wanted, tolerance);
  error.guard_damage = guard_damage(buffers);
  return error;
}

}  // namespace kt
