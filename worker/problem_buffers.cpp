// Allocation, filling and guard checks of a problem's buffers (problem_buffers.hpp).
#include "worker/problem_buffers.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "worker/driver_api.hpp"

namespace kt {
namespace {

// cuMemsetD8Async, not the synchronous cuMemsetD8: that would run on the legacy stream,
// unordered with our non-blocking one.
void fill(CUdeviceptr start, unsigned char value, std::size_t bytes, CUstream stream) {
  if (bytes > 0) KT_CU(cuMemsetD8Async, start, value, bytes, stream);
}

std::vector<std::byte> copy_to_host(CUdeviceptr start, std::size_t bytes) {
  std::vector<std::byte> host(bytes);
  if (bytes > 0) KT_CU(cuMemcpyDtoH, host.data(), start, bytes);
  return host;
}

bool is_canary(std::byte b) {
  return b == std::byte{kGuardCanary};
}

std::size_t changed_bytes(const std::vector<std::byte>& guard) {
  return static_cast<std::size_t>(
      std::count_if(guard.begin(), guard.end(), [](std::byte b) { return !is_canary(b); }));
}

}  // namespace

std::size_t buffer_element_bytes(const std::string& dtype) {
  if (dtype == "e4m3" || dtype == "e5m2" || dtype == "ue4m3") return 1;
  if (dtype == "e2m1x2") return 1;  // two e2m1 values per byte; elements count bytes
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  throw std::invalid_argument("unknown buffer dtype '" + dtype + "'");
}

std::string GuardDamage::describe() const {
  return fmt::format(
      "wrote {} of {}: guard {} {} damaged at byte {} ({} of {} guard bytes changed)",
      after ? "past the end" : "before the start", buffer, after ? "after" : "before", buffer,
      offset, damaged_bytes, kGuardBytes);
}

ProblemBuffers::ProblemBuffers(const std::vector<BufferInstance>& specs) {
  buffers_.reserve(specs.size());
  for (const BufferInstance& spec : specs) {
    for (const Entry& existing : buffers_)
      if (existing.spec.name == spec.name)
        throw std::invalid_argument("buffer '" + spec.name + "' is declared twice");
    if (spec.role != "input" && spec.role != "output" && spec.role != "scratch")
      throw std::invalid_argument("buffer '" + spec.name + "' has unknown role '" + spec.role +
                                  "'");
    const std::size_t element_bytes = buffer_element_bytes(spec.dtype);
    // Outputs are what kernels write, so their edges are where an overrun shows.
    const std::size_t guard = spec.role == "output" ? kGuardBytes : 0;
    if (spec.elements < 0 ||
        static_cast<std::uint64_t>(spec.elements) >
            (std::numeric_limits<std::size_t>::max() - 2 * guard) / element_bytes)
      throw std::invalid_argument("buffer '" + spec.name + "' has an invalid size of " +
                                  std::to_string(spec.elements) + " elements");
    const std::size_t bytes = static_cast<std::size_t>(spec.elements) * element_bytes;
    buffers_.push_back({spec, cuda::DeviceBuffer(guard + bytes + guard), bytes, guard});
  }
}

void ProblemBuffers::prepare(const cuda::SupportKernels& support, std::uint64_t seed,
                             CUstream stream) {
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    const Entry& b = buffers_[i];
    if (b.spec.role == "input" && b.spec.dtype != "i32" && b.spec.dtype != "u32") {
      // Distinct, reproducible streams per buffer (A and B must not be equal).
      const std::uint64_t buffer_seed = seed ^ ((i + 1) * 0xD1B54A32D192ED03ull);
      support.fill_uniform(b.pointer(), b.spec.elements, b.spec.dtype, buffer_seed, stream,
                           static_cast<float>(b.spec.range_low),
                           static_cast<float>(b.spec.range_high));
    } else if (b.spec.role == "input" || b.spec.role == "scratch") {
      fill(b.pointer(), 0, b.bytes, stream);
    }
  }
  poison_outputs(stream);
  KT_CU(cuStreamSynchronize, stream);
}

void ProblemBuffers::poison_outputs(CUstream stream) {
  for (const Entry& b : buffers_) {
    if (b.spec.role != "output") continue;
    fill(b.allocation.get(), kGuardCanary, b.guard, stream);
    fill(b.pointer(), 0xFF, b.bytes, stream);
    fill(b.pointer() + b.bytes, kGuardCanary, b.guard, stream);
  }
}

const ProblemBuffers::Entry& ProblemBuffers::entry(const std::string& name) const {
  for (const Entry& b : buffers_)
    if (b.spec.name == name) return b;
  throw std::invalid_argument("no buffer named '" + name + "'");
}

CUdeviceptr ProblemBuffers::pointer(const std::string& name) const {
  return entry(name).pointer();
}

std::size_t ProblemBuffers::bytes(const std::string& name) const {
  return entry(name).bytes;
}

const BufferInstance& ProblemBuffers::spec(const std::string& name) const {
  return entry(name).spec;
}

std::vector<std::byte> ProblemBuffers::download(const std::string& name) const {
  const Entry& b = entry(name);
  return copy_to_host(b.pointer(), b.bytes);
}

std::vector<GuardDamage> ProblemBuffers::check_guards() const {
  std::vector<GuardDamage> damage;
  for (const Entry& b : buffers_) {
    if (b.guard == 0) continue;
    // After the end: the first changed byte is the one nearest the buffer.
    const std::vector<std::byte> after = copy_to_host(b.pointer() + b.bytes, b.guard);
    const auto first_after = std::find_if_not(after.begin(), after.end(), is_canary);
    if (first_after != after.end())
      damage.push_back({b.spec.name, true, first_after - after.begin(), changed_bytes(after)});
    // Before the start: the nearest changed byte is the last one that changed.
    const std::vector<std::byte> before = copy_to_host(b.allocation.get(), b.guard);
    const auto last_before = std::find_if_not(before.rbegin(), before.rend(), is_canary);
    if (last_before != before.rend())
      damage.push_back(
          {b.spec.name, false, -(last_before - before.rbegin()) - 1, changed_bytes(before)});
  }
  return damage;
}

}  // namespace kt
