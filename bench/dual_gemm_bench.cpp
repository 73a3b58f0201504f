// kt-dual-gemm-bench: issue 13's benchmark. Tunes each grouped dual GEMM + SiLU shape through a
// running kerntuned and reports the job's final comparison: our best variant against the unfused
// baseline (two cuBLASLt GEMMs per group and the SiLU-multiply kernel) re-measured interleaved in
// the same job, the ratio with its 95% interval, TFLOP/s and the fraction of the copy bandwidth
// (see bench/dual_gemm_bench_run.hpp).
//
//   kt-dual-gemm-bench --server http://127.0.0.1:8080 --budget 16 [--shape 8x64x4096x7168:32 ...]
//                      [--out-dir DIR] [--latest bench/results/dual-gemm-latest.json]
//                      [--readme README.md]
//   kt-dual-gemm-bench --from-json DIR/dual-gemm.json --readme README.md     (re-render only)
#include <iostream>

#include "bench/dual_gemm_bench_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kt-dual-gemm-bench", "kt-dual-gemm-bench"};
  kt::bench::DualGemmBenchOptions options;
  kt::bench::add_dual_gemm_bench_options(app, options);
  try {
    app.parse(argc, argv);
    kt::bench::finish_dual_gemm_bench_options(options);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "kt-dual-gemm-bench: " << error.what() << "\n";
    return 1;
  }
  try {
    return kt::bench::run_dual_gemm_bench(options, std::cerr);
  } catch (const kt::ClientError& error) {
    std::cerr << "kt-dual-gemm-bench: " << error.what() << "\n";
    return error.status() == 0 ? 3 : 1;
  } catch (const std::exception& error) {
    std::cerr << "kt-dual-gemm-bench: " << error.what() << "\n";
    return 1;
  }
}
