// The arithmetic behind the benchmark figures, kept apart from any I/O so unit
// tests can check it on made-up numbers: medians and run-to-run spread, ratios against cuBLAS,
// TFLOP/s and the fraction of the measured copy bandwidth, and whether two tuning runs agree.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tuner/median.hpp"

namespace kt::bench {

using kt::median;  // of the values (mean of the middle two for an even count)

// Run-to-run spread of one variant's median over separate runs.
struct Spread {
  int runs = 0;
  double median_us = 0;  // median of the runs' medians
  double min_us = 0;
  double max_us = 0;
  double spread = 0;  // (max - min) / median
};
// Throws std::invalid_argument on an empty list or a non-positive value.
Spread run_to_run_spread(const std::vector<double>& medians_us);

// cuBLAS time over ours: > 1 means we are faster.
double speed_ratio(double cublas_us, double ours_us);
// 2*M*N*K / time, in TFLOP/s.
double gemm_tflops(std::int64_t m, std::int64_t n, std::int64_t k, double us);
// Bytes a GEMM must move at least once: A (M*K), B (N*K) and C (M*N) elements.
double gemm_min_bytes(std::int64_t m, std::int64_t n, std::int64_t k, int element_bytes);
// The GEMM's minimum bytes over its time, as a fraction of the copy bandwidth (GB/s).
double bandwidth_fraction(double bytes, double us, double copy_gbps);
// A device-to-device copy of `bytes` reads and writes them: 2*bytes / time, in GB/s.
double copy_gbps(double bytes_copied, double ms);

// One tuning run as the agreement check needs it: the winner and every measured variant's median,
// keyed by a text that names the variant's template and config.
struct RunWinner {
  std::string winner_key;
  double winner_us = 0;
  std::map<std::string, double> medians_us;
};

// Whether two separate tuning runs of the same job pick the same winner or one within the
// tolerance of it. Where a run measured the other run's winner, the gap is taken inside that run
// (same process, same GPU state): its time for the other winner over its own winner's, minus 1.
// Otherwise the gap is between the two winners' own medians.
struct WinnerAgreement {
  bool same_winner = false;
  double winner_gap = 0;                // winner_b_us / winner_a_us - 1
  std::optional<double> b_winner_in_a;  // A's median of B's winner / A's winner - 1
  std::optional<double> a_winner_in_b;
  double gap = 0;  // the gap the verdict is based on
  bool within_tolerance = false;
};
WinnerAgreement compare_winners(const RunWinner& a, const RunWinner& b, double tolerance = 0.02);

}  // namespace kt::bench
