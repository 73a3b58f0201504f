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
  friend class BoundExpression;
  struct Compiled;  // the parsed muparser program, shared by copies and guarded by a mutex
  // The value with variables()[i] = *inputs[i].
  double evaluate_inputs(const double* const* inputs) const;
  long long integral(double value) const;  // evaluate_integer's rounding and checks

  std::string text_;
  std::shared_ptr<Compiled> compiled_;
};

// An Expression tied to one Bindings map: the values of its variables are read through pointers
// into the map found once, so a loop that rewrites the map's values (never its keys) evaluates it
// many times without a lookup (SpaceIndex's walk over a family's configs). The expression and the
// map must outlive it.
class BoundExpression {
 public:
  // Throws ExpressionError, as Expression::evaluate would, on a variable the map does not bind.
  BoundExpression(const Expression& expression, const Bindings& bindings);
  double evaluate() const;             // as Expression::evaluate(bindings)
  long long evaluate_integer() const;  // as Expression::evaluate_integer(bindings)
  const Expression& expression() const { return *expression_; }

 private:
  const Expression* expression_;
  std::vector<const double*> inputs_;
};

// The parsed Expression for a text, from a process-wide cache: parsing costs far more than
// evaluating, and manifests repeat the same few texts for every variant. Thread-safe; throws
// ExpressionError like the constructor (failures are not cached).
const Expression& shared_expression(const std::string& text);

}  // namespace kt
