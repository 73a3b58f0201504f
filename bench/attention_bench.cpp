// kt-attention-bench: issue 12's benchmark. Tunes each attention_fwd shape (bf16 and fp16) through
// a running kerntuned, then times each job's final-comparison candidates interleaved with PyTorch
// SDPA at its best (flash, cuDNN or default backend) in one process on the same GPU, by
// bench/sdpa_baseline.py (see bench/attention_bench_run.hpp).
//
//   kt-attention-bench --server http://127.0.0.1:8080 --budget 16 [--shape 4x16x4096x128c:32 ...]
//                      [--dtype bf16 ...] [--out-dir DIR] [--readme README.md]
//   kt-attention-bench --from-json DIR/attention.json --readme README.md     (re-render only)
#include <iostream>

#include "bench/attention_bench_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kt-attention-bench", "kt-attention-bench"};
  kt::bench::AttentionBenchOptions options;
  kt::bench::add_attention_bench_options(app, options);
  try {
    app.parse(argc, argv);
    kt::bench::finish_attention_bench_options(options);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "kt-attention-bench: " << error.what() << "\n";
    return 1;
  }
  try {
    return kt::bench::run_attention_bench(options, std::cerr);
  } catch (const kt::ClientError& error) {
    std::cerr << "kt-attention-bench: " << error.what() << "\n";
    return error.status() == 0 ? 3 : 1;
  } catch (const std::exception& error) {
    std::cerr << "kt-attention-bench: " << error.what() << "\n";
    return 1;
  }
}
