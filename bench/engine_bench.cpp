// kt-engine-bench: issue 3's figures through a running kerntuned (see
// bench/engine_bench_run.hpp).
//
//   kt-engine-bench --server http://127.0.0.1:8080 [--kerntuned build/bin/kerntuned]
//                   [--phases spread,repeat,sweep] [--out-dir DIR] [--deadline-s 240]
#include <iostream>

#include "bench/engine_bench_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kt-engine-bench", "kt-engine-bench"};
  kt::bench::EngineBenchOptions options;
  kt::bench::add_engine_bench_options(app, options);
  try {
    app.parse(argc, argv);
    kt::bench::finish_engine_bench_options(options);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "kt-engine-bench: " << error.what() << "\n";
    return 1;
  }
  try {
    return kt::bench::run_engine_bench(options, std::cerr);
  } catch (const kt::ClientError& error) {
    std::cerr << "kt-engine-bench: " << error.what() << "\n";
    return error.status() == 0 ? 3 : 1;
  } catch (const std::exception& error) {
    std::cerr << "kt-engine-bench: " << error.what() << "\n";
    return 1;
  }
}
