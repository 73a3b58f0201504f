// kt-copy-bandwidth: the GPU's device-to-device copy bandwidth, the yardstick of the memory-bound
// GEMM shapes. Prints one JSON object on stdout (see bench/copy_bandwidth_probe.hpp).
//
//   kt-copy-bandwidth [--device 0] [--bytes 1073741824] [--warmup 5] [--trials 30]
#include <iostream>

#include <CLI/CLI.hpp>

#include "bench/copy_bandwidth_probe.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Measures device-to-device copy bandwidth (cuMemcpyDtoDAsync) and prints JSON",
               "kt-copy-bandwidth"};
  int device = 0;
  std::size_t bytes = std::size_t{1} << 30;
  int warmup = 5;
  int trials = 30;
  app.add_option("--device", device, "GPU ordinal")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--bytes", bytes, "size of the copied buffer")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed copies first")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--trials", trials, "timed copies (the median is reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  CLI11_PARSE(app, argc, argv);
  try {
    const auto measurement = kt::bench::measure_copy_bandwidth(device, bytes, warmup, trials);
    std::cout << kt::bench::copy_bandwidth_to_json(measurement).dump(2) << std::endl;
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "kt-copy-bandwidth: " << error.what() << "\n";
    return 2;
  }
}
