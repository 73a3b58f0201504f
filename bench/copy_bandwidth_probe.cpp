#include "bench/copy_bandwidth_probe.hpp"

#include <algorithm>
#include <stdexcept>

#include "bench/bench_math.hpp"
#include "bench/driver_version.hpp"
#include "worker/cuda_buffer.hpp"
#include "worker/cuda_context.hpp"
#include "worker/cuda_event.hpp"
#include "worker/cuda_stream.hpp"
#include "worker/driver_api.hpp"

namespace kt::bench {

CopyBandwidthMeasurement measure_copy_bandwidth(int ordinal, std::size_t bytes, int warmup,
                                                int trials) {
  if (bytes == 0) throw std::invalid_argument("copy bandwidth of a zero-byte buffer");
  if (trials < 1) throw std::invalid_argument("copy bandwidth needs at least one trial");
  CopyBandwidthMeasurement m;
  m.ordinal = ordinal;
  m.bytes = bytes;
  m.warmup = warmup;
  m.driver = nvidia_driver_version();

  cuda::PrimaryContext context(ordinal);
  char name[256] = {};
  KT_CU(cuDeviceGetName, name, static_cast<int>(sizeof name), context.device());
  m.device = name;
  int cuda_version = 0;
  KT_CU(cuDriverGetVersion, &cuda_version);
  m.cuda_driver = cuda_version_text(cuda_version);

  cuda::Stream stream;
  cuda::DeviceBuffer source(bytes);
  cuda::DeviceBuffer target(bytes);
  source.fill_bytes(0x5a, stream.get());  // touch both buffers before timing
  target.fill_bytes(0, stream.get());
  for (int i = 0; i < warmup; ++i)
    KT_CU(cuMemcpyDtoDAsync, target.get(), source.get(), bytes, stream.get());
  stream.synchronize();

  cuda::Event start, stop;
  for (int i = 0; i < trials; ++i) {
    start.record(stream.get());
    KT_CU(cuMemcpyDtoDAsync, target.get(), source.get(), bytes, stream.get());
    stop.record(stream.get());
    stop.synchronize();
    m.trial_ms.push_back(cuda::elapsed_ms(start, stop));
  }
  const double b = static_cast<double>(bytes);
  m.ms_median = median(m.trial_ms);
  m.gbps = copy_gbps(b, m.ms_median);
  const auto [fastest, slowest] = std::minmax_element(m.trial_ms.begin(), m.trial_ms.end());
  m.gbps_max = copy_gbps(b, *fastest);
  m.gbps_min = copy_gbps(b, *slowest);
  return m;
}

nlohmann::json copy_bandwidth_to_json(const CopyBandwidthMeasurement& m) {
  return {{"device", m.device},
          {"ordinal", m.ordinal},
          {"driver", m.driver},
          {"cuda_driver", m.cuda_driver},
          {"bytes", m.bytes},
          {"warmup", m.warmup},
          {"trials", m.trial_ms.size()},
          {"ms_median", m.ms_median},
          {"gbps", m.gbps},
          {"gbps_min", m.gbps_min},
          {"gbps_max", m.gbps_max},
          {"method",
           "cuMemcpyDtoDAsync device to device, CUDA events, median of the trials; "
           "GB/s = 2 * bytes (read + written) / time"}};
}

}  // namespace kt::bench
