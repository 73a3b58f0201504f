#include "bench/bench_math.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kt::bench {

Spread run_to_run_spread(const std::vector<double>& medians_us) {
  if (medians_us.empty()) throw std::invalid_argument("run-to-run spread of no runs");
  for (double value : medians_us)
    if (!(value > 0)) throw std::invalid_argument("run-to-run spread: a median is not positive");
  Spread spread;
  spread.runs = static_cast<int>(medians_us.size());
  spread.median_us = median(medians_us);
  const auto [min, max] = std::minmax_element(medians_us.begin(), medians_us.end());
  spread.min_us = *min;
  spread.max_us = *max;
  spread.spread = (spread.max_us - spread.min_us) / spread.median_us;
  return spread;
}

double speed_ratio(double cublas_us, double ours_us) {
  if (!(ours_us > 0) || !(cublas_us > 0))
    throw std::invalid_argument("speed ratio needs two positive times");
  return cublas_us / ours_us;
}

double gemm_tflops(std::int64_t m, std::int64_t n, std::int64_t k, double us) {
  if (!(us > 0)) throw std::invalid_argument("TFLOP/s of a non-positive time");
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) /
         (us * 1e-6) / 1e12;
}

double gemm_min_bytes(std::int64_t m, std::int64_t n, std::int64_t k, int element_bytes) {
  return (static_cast<double>(m) * static_cast<double>(k) +
          static_cast<double>(n) * static_cast<double>(k) +
          static_cast<double>(m) * static_cast<double>(n)) *
         element_bytes;
}

double bandwidth_fraction(double bytes, double us, double copy_gbps) {
  if (!(us > 0) || !(copy_gbps > 0))
    throw std::invalid_argument("bandwidth fraction needs a positive time and copy bandwidth");
  return bytes / (us * 1e-6) / 1e9 / copy_gbps;
}

double copy_gbps(double bytes_copied, double ms) {
  if (!(ms > 0)) throw std::invalid_argument("copy bandwidth of a non-positive time");
  return 2.0 * bytes_copied / (ms * 1e-3) / 1e9;
}

WinnerAgreement compare_winners(const RunWinner& a, const RunWinner& b, double tolerance) {
  if (!(a.winner_us > 0) || !(b.winner_us > 0))
    throw std::invalid_argument("winner agreement needs two measured winners");
  WinnerAgreement agreement;
  agreement.same_winner = a.winner_key == b.winner_key;
  agreement.winner_gap = b.winner_us / a.winner_us - 1;
  if (auto it = a.medians_us.find(b.winner_key); it != a.medians_us.end())
    agreement.b_winner_in_a = it->second / a.winner_us - 1;
  if (auto it = b.medians_us.find(a.winner_key); it != b.medians_us.end())
    agreement.a_winner_in_b = it->second / b.winner_us - 1;
  if (agreement.same_winner) {
    agreement.gap = 0;
  } else if (agreement.b_winner_in_a || agreement.a_winner_in_b) {
    agreement.gap =
        std::max(agreement.b_winner_in_a.value_or(0.0), agreement.a_winner_in_b.value_or(0.0));
  } else {
    agreement.gap = std::abs(agreement.winner_gap);
  }
  agreement.within_tolerance = agreement.same_winner || agreement.gap <= tolerance;
  return agreement;
}

}  // namespace kt::bench
