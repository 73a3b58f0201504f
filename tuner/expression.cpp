#include "tuner/expression.hpp"

#include <cmath>
#include <limits>
#include <mutex>
#include <unordered_map>

#include <muParser.h>

#include "tuner/client_values.hpp"

namespace kt {
namespace {

// Thrown by the functions kerntune adds; caught in Expression and reported with its text.
class MathError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool is_integral(double value) {
  return std::isfinite(value) && value == std::trunc(value);
}

// Integers up to 2^53 are exact in a double; beyond that integer arithmetic is not trustworthy.
constexpr double kMaxExactDouble = static_cast<double>(kMaxExactInteger);

long long integer_operand(double value, const char* operation) {
  if (!is_integral(value) || std::fabs(value) > kMaxExactDouble)
    throw MathError(std::string(operation) + " needs integer operands, got " +
                    std::to_string(value));
  return static_cast<long long>(value);
}

double remainder_op(double a, double b) {
  const long long dividend = integer_operand(a, "'%'");
  const long long divisor = integer_operand(b, "'%'");
  if (divisor == 0) throw MathError("remainder by zero");
  return static_cast<double>(dividend % divisor);
}

double cdiv_fn(double a, double b) {
  const long long dividend = integer_operand(a, "cdiv");
  const long long divisor = integer_operand(b, "cdiv");
  if (divisor == 0) throw MathError("cdiv by zero");
  long long quotient = dividend / divisor;
  // C++ truncates toward zero; round up when the exact quotient is positive and inexact.
  if (dividend % divisor != 0 && ((dividend < 0) == (divisor < 0))) ++quotient;
  return static_cast<double>(quotient);
}

double floor_fn(double x) {
  return std::floor(x);
}
double ceil_fn(double x) {
  return std::ceil(x);
}

double pow2_fn(double x) {
  if (!is_integral(x) || x < 1 || x > kMaxExactDouble) return 0;
  const auto value = static_cast<unsigned long long>(x);
  return (value & (value - 1)) == 0 ? 1 : 0;
}

// muparser's '=' assigns to a variable; in a manifest it is always a typo for '=='.
bool has_assignment(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    const char before = i > 0 ? text[i - 1] : ' ';
    const char after = i + 1 < text.size() ? text[i + 1] : ' ';
    if (after == '=') {
      ++i;  // skip the second half of "=="
      continue;
    }
    if (before == '<' || before == '>' || before == '!') continue;
    return true;
  }
  return false;
}

// muparser's message names the token it stopped at, which can be most of a long expression.
std::string parser_message(const mu::Parser::exception_type& error) {
  std::string message = error.GetMsg();
  const std::string token = error.GetToken();
  if (token.size() <= kQuotedPrefixChars) return message;
  if (const auto at = message.find(token); at != std::string::npos)
    return message.replace(at, token.size(), quote_client_text(token));
  return quote_client_text(message);
}

}  // namespace

struct Expression::Compiled {
  std::mutex mutex;
  mu::Parser parser;
  std::map<std::string, double> storage;  // node-based: muparser keeps pointers to the values
  std::vector<std::string> variables;
  std::vector<double*> slots;  // storage of variables[i], for evaluate()

  static double* create_variable(const char* name, void* self) {
    return &static_cast<Compiled*>(self)->storage[name];
  }
};

Expression::Expression(std::string text)
    : text_(std::move(text)), compiled_(std::make_shared<Compiled>()) {
  if (text_.find_first_not_of(" \t\r\n") == std::string::npos)
    throw ExpressionError("empty expression");
  if (has_assignment(text_))
    throw ExpressionError("expression " + quote_client_text(text_) +
                          " uses '=' (did you mean '=='?)");
  mu::Parser& parser = compiled_->parser;
  try {
    parser.DefineOprt("%", remainder_op, mu::prMUL_DIV, mu::oaLEFT);
    parser.DefineFun("cdiv", cdiv_fn);
    parser.DefineFun("floor", floor_fn);
    parser.DefineFun("ceil", ceil_fn);
    parser.DefineFun("pow2", pow2_fn);
    // Every name the expression mentions gets a slot; evaluate() refuses names left unbound.
    parser.SetVarFactory(&Compiled::create_variable, compiled_.get());
    parser.SetExpr(text_);
    for (const auto& [name, slot] : parser.GetUsedVar()) {
      compiled_->variables.push_back(name);
      compiled_->slots.push_back(slot);
    }
  } catch (const mu::Parser::exception_type& e) {
    throw ExpressionError("cannot parse expression " + quote_client_text(text_) + ": " +
                          parser_message(e));
  } catch (const MathError& e) {
    throw ExpressionError("expression " + quote_client_text(text_) + ": " + e.what());
  }
}

namespace {

std::vector<const double*> inputs_of(const std::vector<std::string>& variables,
                                     const Bindings& bindings, const std::string& text) {
  std::vector<const double*> inputs;
  inputs.reserve(variables.size());
  for (const std::string& name : variables) {
    const auto found = bindings.find(name);
    if (found == bindings.end())
      throw ExpressionError("unknown variable " + quote_client_text(name) + " in expression " +
                            quote_client_text(text));
    inputs.push_back(&found->second);
  }
  return inputs;
}

}  // namespace

double Expression::evaluate(const Bindings& bindings) const {
  const std::vector<const double*> inputs = inputs_of(compiled_->variables, bindings, text_);
  return evaluate_inputs(inputs.data());
}

double Expression::evaluate_inputs(const double* const* inputs) const {
  std::lock_guard lock(compiled_->mutex);
  for (std::size_t i = 0; i < compiled_->slots.size(); ++i) *compiled_->slots[i] = *inputs[i];
  double value = 0;
  try {
    value = compiled_->parser.Eval();
    if (compiled_->parser.GetNumResults() != 1)
      throw ExpressionError("expression " + quote_client_text(text_) +
                            " gives several values (stray ',')");
  } catch (const mu::Parser::exception_type& e) {
    throw ExpressionError("cannot evaluate expression " + quote_client_text(text_) + ": " +
                          parser_message(e));
  } catch (const MathError& e) {
    throw ExpressionError("expression " + quote_client_text(text_) + ": " + e.what());
  }
  if (!std::isfinite(value))
    throw ExpressionError("expression " + quote_client_text(text_) +
                          " is not finite (division by zero?)");
  return value;
}

long long Expression::evaluate_integer(const Bindings& bindings) const {
  return integral(evaluate(bindings));
}

long long Expression::integral(double value) const {
  const double rounded = std::round(value);
  // A little slack for quotients like (BM/16)*16 that land a hair off an integer.
  if (std::fabs(value - rounded) > 1e-9 * std::max(1.0, std::fabs(value)))
    throw ExpressionError("expression " + quote_client_text(text_) +
                          " is not an integer: " + std::to_string(value));
  if (rounded >= 9223372036854775808.0 || rounded < -9223372036854775808.0)
    throw ExpressionError("expression " + quote_client_text(text_) + " is out of the 64-bit range");
  return static_cast<long long>(rounded);
}

BoundExpression::BoundExpression(const Expression& expression, const Bindings& bindings)
    : expression_(&expression),
      inputs_(inputs_of(expression.compiled_->variables, bindings, expression.text_)) {}

double BoundExpression::evaluate() const {
  return expression_->evaluate_inputs(inputs_.data());
}

long long BoundExpression::evaluate_integer() const {
  return expression_->integral(evaluate());
}

std::vector<std::string> Expression::variables() const {
  return compiled_->variables;
}

const Expression& shared_expression(const std::string& text) {
  static std::mutex mutex;
  static std::unordered_map<std::string, Expression> cache;  // references survive rehashing
  std::lock_guard lock(mutex);
  if (const auto found = cache.find(text); found != cache.end()) return found->second;
  return cache.emplace(text, Expression(text)).first->second;
}

}  // namespace kt
