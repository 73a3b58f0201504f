#include "worker/problem_buffers.hpp"

#include <limits>
#include <stdexcept>

#include "worker/driver_api.hpp"

namespace kt {

std::size_t buffer_element_bytes(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  throw std::invalid_argument("unknown buffer dtype '" + dtype + "'");
}

ProblemBuffers::ProblemBuffers(const std::vector<BufferInstance>& specs) {
  buffers_.reserve(specs.size());
  for (const BufferInstance& spec : specs) {
    for (const auto& [existing, unused] : buffers_)
      if (existing.name == spec.name)
        throw std::invalid_argument("buffer '" + spec.name + "' is declared twice");
    if (spec.role != "input" && spec.role != "output" && spec.role != "scratch")
      throw std::invalid_argument("buffer '" + spec.name + "' has unknown role '" + spec.role +
                                  "'");
    const std::size_t element_bytes = buffer_element_bytes(spec.dtype);
    if (spec.elements < 0 || static_cast<std::uint64_t>(spec.elements) >
                                 std::numeric_limits<std::size_t>::max() / element_bytes)
      throw std::invalid_argument("buffer '" + spec.name + "' has an invalid size of " +
                                  std::to_string(spec.elements) + " elements");
    buffers_.emplace_back(
        spec, cuda::DeviceBuffer(static_cast<std::size_t>(spec.elements) * element_bytes));
  }
}

void ProblemBuffers::prepare(const cuda::SupportKernels& support, std::uint64_t seed,
                             CUstream stream) {
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    auto& [spec, buffer] = buffers_[i];
    if (spec.role == "input" &&
        (spec.dtype == "bf16" || spec.dtype == "fp16" || spec.dtype == "f32")) {
      // Distinct, reproducible streams per buffer (A and B must not be equal).
      const std::uint64_t buffer_seed = seed ^ ((i + 1) * 0xD1B54A32D192ED03ull);
      support.fill_uniform(buffer.get(), spec.elements, spec.dtype, buffer_seed, stream);
    } else if (spec.role == "input" || spec.role == "scratch") {
      buffer.fill_bytes(0, stream);
    }
  }
  poison_outputs(stream);
  KT_CU(cuStreamSynchronize, stream);
}

void ProblemBuffers::poison_outputs(CUstream stream) {
  for (auto& [spec, buffer] : buffers_)
    if (spec.role == "output") buffer.fill_bytes(0xFF, stream);
}

std::size_t ProblemBuffers::index_of(const std::string& name) const {
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (buffers_[i].first.name == name) return i;
  throw std::invalid_argument("no buffer named '" + name + "'");
}

const cuda::DeviceBuffer& ProblemBuffers::buffer(const std::string& name) const {
  return buffers_[index_of(name)].second;
}

const BufferInstance& ProblemBuffers::spec(const std::string& name) const {
  return buffers_[index_of(name)].first;
}

std::vector<std::byte> ProblemBuffers::download(const std::string& name) const {
  const cuda::DeviceBuffer& device = buffer(name);
  std::vector<std::byte> host(device.bytes());
  device.copy_to_host(host.data(), host.size());
  return host;
}

}  // namespace kt
