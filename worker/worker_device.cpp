#include "worker/worker_device.hpp"

#include "worker/device_probe.hpp"

namespace kt {

WorkerDevice::WorkerDevice(int ordinal)
    : info(describe_device(ordinal)),
      context(ordinal),
      support(info.arch),
      flusher(info.l2_bytes, &support),
      clocks(NvmlClockReader::open(info.uuid, &clocks_unavailable)) {}

}  // namespace kt
