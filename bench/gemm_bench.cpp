// kt-gemm-bench: issue 4's benchmark, with issue 9's fair figures. Tunes each bf16 GEMM shape
// through a running kerntuned and reports the job's final comparison: our best variant against
// the baseline (cublasLt, best of its heuristic's top algorithms) re-measured interleaved in the
// same job, the ratio with its 95% interval, and with --repeat N its run-to-run spread (see
// bench/gemm_bench_run.hpp).
//
//   kt-gemm-bench --server http://127.0.0.1:8080 --budget 32 [--shape 4096x4096x4096:64 ...]
//                 [--repeat 3] [--out-dir DIR] [--latest bench/results/gemm-latest.json]
//                 [--readme README.md]
//   kt-gemm-bench --from-json DIR/gemm.json --readme README.md     (re-render only)
#include <iostream>

#include "bench/gemm_bench_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kt-gemm-bench", "kt-gemm-bench"};
  kt::bench::GemmBenchOptions options;
  kt::bench::add_gemm_bench_options(app, options);
  try {
    app.parse(argc, argv);
    kt::bench::finish_gemm_bench_options(options);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "kt-gemm-bench: " << error.what() << "\n";
    return 1;
  }
  try {
    return kt::bench::run_gemm_bench(options, std::cerr);
  } catch (const kt::ClientError& error) {
    std::cerr << "kt-gemm-bench: " << error.what() << "\n";
    return error.status() == 0 ? 3 : 1;
  } catch (const std::exception& error) {
    std::cerr << "kt-gemm-bench: " << error.what() << "\n";
    return 1;
  }
}
