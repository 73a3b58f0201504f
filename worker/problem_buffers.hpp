// The device buffers of one problem instance, by name: allocated together, inputs filled with
// fresh seeded random values, scratch zeroed once, outputs poisoned (0xFF bytes: NaN in bf16,
// fp16 and f32) so an element the kernel never writes shows up in validation.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tuner/measure_protocol.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/support_kernels.hpp"

namespace kt {

// Bytes per element of a buffer dtype ("bf16" 2, "f32" 4, ...); throws std::invalid_argument.
std::size_t buffer_element_bytes(const std::string& dtype);

class ProblemBuffers {
 public:
  // Allocates every buffer. Throws std::invalid_argument for a bad spec (duplicate name,
  // negative size, unknown dtype) and CudaError when the device is out of memory.
  explicit ProblemBuffers(const std::vector<BufferInstance>& specs);

  // Random inputs (seed mixed with the buffer's index; integer inputs are zeroed), zeroed
  // scratch, poisoned outputs; waits for it all.
  void prepare(const cuda::SupportKernels& support, std::uint64_t seed, CUstream stream);
  // Enqueues the poisoning of every output on stream (ordered before the next launch on it).
  void poison_outputs(CUstream stream);

  // Throws std::invalid_argument naming the buffer if there is none of that name.
  const cuda::DeviceBuffer& buffer(const std::string& name) const;
  const BufferInstance& spec(const std::string& name) const;
  std::vector<std::byte> download(const std::string& name) const;

 private:
  std::size_t index_of(const std::string& name) const;
  std::vector<std::pair<BufferInstance, cuda::DeviceBuffer>> buffers_;
};

}  // namespace kt
