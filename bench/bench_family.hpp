// The families kt-bench runs, one subcommand each (gemm, attention, dual-gemm, engine), behind
// one interface: the main declares a family's options, checks them and runs it, the same way for
// every family.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kt::bench {

class BenchFamily {
 public:
  virtual ~BenchFamily() = default;
  // Declares the family's options on its subcommand (CLI11).
  virtual void add_options(CLI::App& app) = 0;
  // Checks what CLI11 cannot and parses the shapes; throws std::invalid_argument.
  virtual void finish_options() = 0;
  // Runs the family, progress on log; the process exit code.
  virtual int run(std::ostream& log) = 0;
};

// The subcommand names, in the order the help lists them.
std::vector<std::string> bench_family_names();
// The family of that name; std::invalid_argument naming the known ones for any other.
std::unique_ptr<BenchFamily> make_bench_family(const std::string& name);

}  // namespace kt::bench
