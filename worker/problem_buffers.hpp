// The device buffers of one problem instance, by name: allocated together, inputs filled with
// fresh seeded random values, scratch zeroed once, outputs poisoned (0xFF bytes: NaN in bf16,
// fp16 and f32) so an element the kernel never writes shows up in validation.
//
// Every output buffer sits between two guard regions filled with a canary byte, so a kernel that
// writes past the end of its output (or before its start) is caught by check_guards() instead of
// silently scribbling over a neighbour or over the allocator's slack:
//   [ guard: kGuardBytes of kGuardCanary | the buffer (pointer(name)) | guard: kGuardBytes ]
// Kernels, cuBLAS and tensor maps only ever see pointer(name), the start of the buffer itself.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/measure_protocol.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/support_kernels.hpp"

namespace kt {

// 4 KiB each side: an overrun shows at its first byte, and one of a few tile rows (a 256-wide
// bf16 row is 512 bytes) stays inside the guard instead of reaching other memory. A multiple of
// 256, it keeps the buffer as aligned as cuMemAlloc's own (TMA needs 16 bytes).
inline constexpr std::size_t kGuardBytes = 4096;
static_assert(kGuardBytes % 256 == 0, "the guard keeps the buffer 256-byte aligned");
// Not 0x00 (what a stray zero-fill writes) nor 0xFF (the outputs' poison); as bf16 0xA5A5 is
// -2.9e-16, a value no checked kernel writes by accident.
inline constexpr unsigned char kGuardCanary = 0xA5;

// Bytes per element of a buffer dtype ("bf16" 2, "f32" 4, ...); throws std::invalid_argument.
std::size_t buffer_element_bytes(const std::string& dtype);

// A guard region no longer holding its canary.
struct GuardDamage {
  std::string buffer;
  bool after = true;  // the guard after the buffer's end; false: the one before its start
  // The damaged byte nearest the buffer, relative to it: after, bytes past the end (0 is the
  // first byte after the last element); before, negative (-1 is the byte just before the first).
  std::int64_t offset = 0;
  std::size_t damaged_bytes = 0;  // of the kGuardBytes of that guard

  // "wrote past the end of C: guard after C damaged at byte 0 (2 of 4096 guard bytes changed)"
  std::string describe() const;
};

class ProblemBuffers {
 public:
  // Allocates every buffer (outputs with their guards). Throws std::invalid_argument for a bad
  // spec (duplicate name, negative size, unknown dtype) and CudaError when the device is out of
  // memory.
  explicit ProblemBuffers(const std::vector<BufferInstance>& specs);

  // Random inputs (seed mixed with the buffer's index; integer inputs are zeroed), zeroed
  // scratch, poisoned outputs and fresh canaries; waits for it all.
  void prepare(const cuda::SupportKernels& support, std::uint64_t seed, CUstream stream);
  // Enqueues the poisoning of every output, and the refilling of its guards with the canary, on
  // stream (ordered before the next launch on it).
  void poison_outputs(CUstream stream);

  // The buffer as a kernel sees it: the first byte after the guard, for an output. Throws
  // std::invalid_argument naming the buffer if there is none of that name.
  CUdeviceptr pointer(const std::string& name) const;
  std::size_t bytes(const std::string& name) const;
  const BufferInstance& spec(const std::string& name) const;

  // The buffer's own bytes (never the guards). Like check_guards(), a synchronous copy: call it
  // once the work on the buffers is finished (stream synchronized).
  std::vector<std::byte> download(const std::string& name) const;
  // Every damaged guard, in buffer order, the guard after a buffer before the one before it;
  // empty when all are intact.
  std::vector<GuardDamage> check_guards() const;

 private:
  struct Entry {
    BufferInstance spec;
    cuda::DeviceBuffer allocation;  // guard + bytes + guard, or just bytes
    std::size_t bytes = 0;          // the part a kernel sees
    std::size_t guard = 0;          // canary bytes on each side; 0: unguarded
    CUdeviceptr pointer() const { return allocation.get() + guard; }
  };

  const Entry& entry(const std::string& name) const;
  std::vector<Entry> buffers_;
};

}  // namespace kt
