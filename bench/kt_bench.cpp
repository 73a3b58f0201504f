// kt-bench: the benchmark programs, one family per subcommand (bench/bench_family.hpp). Each
// tunes its shapes through a running kerntuned and writes a report (table.md and JSON):
//
//   kt-bench gemm --server http://127.0.0.1:8080 --budget 32 [--shape 4096x4096x4096:64 ...]
//                 [--shape-set square|models|all] [--repeat 3] [--out-dir DIR] [--doc [FILE]]
//   kt-bench dual-gemm --budget 16 [--shape 8x64x4096x7168:32 ...] [--doc [FILE]]
//   kt-bench attention --budget 16 [--shape 4x16x4096x128c:32 ...] [--dtype bf16 ...]
//   kt-bench engine [--kerntuned build/bin/kerntuned] [--phases spread,repeat,sweep]
//   kt-bench gemm --from-json DIR/gemm.json --doc     (re-render only)
//
// Exit codes: 0 done, 1 bad arguments or nothing measured, 3 the daemon could not be reached.
#include <iostream>
#include <map>
#include <memory>

#include "bench/bench_family.hpp"
#include "client/kerntune_client.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Benchmarks of kerntune's kernel families through a running kerntuned", "kt-bench"};
  app.require_subcommand(1);
  std::map<CLI::App*, std::unique_ptr<kt::bench::BenchFamily>> families;
  for (const std::string& name : kt::bench::bench_family_names()) {
    CLI::App* sub = app.add_subcommand(name);
    auto family = kt::bench::make_bench_family(name);
    family->add_options(*sub);
    families.emplace(sub, std::move(family));
  }
  kt::bench::BenchFamily* chosen = nullptr;
  try {
    app.parse(argc, argv);
    chosen = families.at(app.get_subcommands().front()).get();
    chosen->finish_options();
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "kt-bench: " << error.what() << "\n";
    return 1;
  }
  try {
    return chosen->run(std::cerr);
  } catch (const kt::ClientError& error) {
    std::cerr << "kt-bench: " << error.what() << "\n";
    return error.status() == 0 ? 3 : 1;
  } catch (const std::exception& error) {
    std::cerr << "kt-bench: " << error.what() << "\n";
    return 1;
  }
}
