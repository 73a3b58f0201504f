// Arithmetic over named integers, as written in family manifests ("STAGES*(BM+BN)*BK*elem_bytes
// <= smem_optin", "cdiv(N,BN)"). Built on muparser; adds cdiv, floor, ceil, pow2 and '%'.
// An Expression is parsed once and may be evaluated from several threads (calls serialize).
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kt {

using Bindings = std::map<std::string, double>;

class ExpressionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Expression {
 public:
  // Throws ExpressionError if the text does not parse.
  explicit Expression(std::string text);
  // Throws ExpressionError naming the expression on an unbound variable or a math error.
  double evaluate(const Bindings& bindings) const;
  // evaluate() rounded to an integer; throws if the value is not integral or out of int64 range.
  long long evaluate_integer(const Bindings& bindings) const;
  // Names the expression uses.
  std::vector<std::string> variables() const;
  const std::string& text() const { return text_; }

 private:
  struct Compiled;  // the parsed muparser program, shared by copies and guarded by a mutex
  std::string text_;
  std::shared_ptr<Compiled> compiled_;
};

// The parsed Expression for a text, from a process-wide cache: parsing costs far more than
// evaluating, and manifests repeat the same few texts for every variant. Thread-safe; throws
// ExpressionError like the constructor (failures are not cached).
const Expression& shared_expression(const std::string& text);

}  // namespace kt
