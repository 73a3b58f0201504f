// libFuzzer target: the text of a manifest formula (constraints, launch dims, buffer sizes)
// through kt::Expression: parsed, then evaluated with every variable it names bound, once to
// values a real GPU and shape give and once to each of a few edge values (0, -1, 2^53, ...), and
// once with nothing bound. ExpressionError is the only exception Expression documents.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "fuzz/unexpected_exception.hpp"
#include "tuner/expression.hpp"

namespace {

// What variant_space.cpp binds for an H100 and a 4096^3 bf16 GEMM; any other name gets kAxis.
const std::map<std::string, double> kRealistic{{"M", 4096},
                                               {"N", 4096},
                                               {"K", 4096},
                                               {"elem_bytes", 2},
                                               {"smem_optin", 232448},
                                               {"smem_per_sm", 233472},
                                               {"max_threads", 1024},
                                               {"regs_per_block", 65536},
                                               {"max_regs_per_thread", 255},
                                               {"sm_count", 132},
                                               {"max_cluster", 8},
                                               {"l2_bytes", 52428800},
                                               {"tmem_columns", 0},
                                               {"sm", 90}};
constexpr double kAxis = 64;
constexpr std::array<double, 6> kEdges{0, -1, 3, 9007199254740993.0, 9.3e18, -9.3e18};

void evaluate(const kt::Expression& expression, const kt::Bindings& bindings) {
  try {
    (void)expression.evaluate(bindings);
    (void)expression.evaluate_integer(bindings);
  } catch (const kt::ExpressionError&) {
    // Unbound name, math error, not finite, not an integer: reported with the text.
  }
}

void run(const std::string& text) {
  const kt::Expression expression(text);
  const auto names = expression.variables();
  kt::Bindings realistic;
  for (const std::string& name : names) {
    const auto known = kRealistic.find(name);
    realistic[name] = known == kRealistic.end() ? kAxis : known->second;
  }
  evaluate(expression, realistic);
  for (std::size_t shift = 0; shift < kEdges.size(); ++shift) {
    kt::Bindings edges;
    for (const std::string& name : names)
      edges[name] = kEdges[(std::hash<std::string>{}(name) + shift) % kEdges.size()];
    evaluate(expression, edges);
  }
  if (!names.empty()) evaluate(expression, {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const kt::ExpressionError&) {
    // Does not parse: empty, '=' for '==', a syntax error.
  } catch (const std::exception& error) {
    kt::fuzz::abort_unexpected("expression", error);
  } catch (...) {
    kt::fuzz::abort_unexpected("expression");
  }
  return 0;
}
