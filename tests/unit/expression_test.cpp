#include "tuner/expression.hpp"

#include <algorithm>
#include <thread>

#include <gtest/gtest.h>

namespace kt {
namespace {

double eval(const std::string& text, const Bindings& bindings = {}) {
  return Expression(text).evaluate(bindings);
}

std::string error_of(const std::string& text, const Bindings& bindings = {}) {
  try {
    Expression(text).evaluate(bindings);
  } catch (const ExpressionError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Expression, ArithmeticAndPowerFollowMuparserPrecedence) {
  EXPECT_EQ(eval("1 + 2*3"), 7);
  EXPECT_EQ(eval("2^31"), 2147483648.0);
  EXPECT_EQ(eval("(1+2)*3"), 9);
  EXPECT_EQ(eval("min(3, 4) + max(1, 2) + abs(-5)"), 10);
}

TEST(Expression, RemainderIsIntegerAndBindsLikeMultiplication) {
  EXPECT_EQ(eval("7 % 3"), 1);
  EXPECT_EQ(eval("-7 % 3"), -1);
  EXPECT_EQ(eval("2*3 % 4"), 2);  // (2*3) % 4, left to right
  EXPECT_EQ(eval("1 + 10 % 4"), 3);
  EXPECT_EQ(eval("BM % 16 == 0", {{"BM", 64}}), 1);
  EXPECT_EQ(eval("BM % 16 == 0", {{"BM", 72}}), 0);
}

TEST(Expression, RemainderByZeroIsAnErrorNamingTheExpression) {
  const std::string message = error_of("N % D", {{"N", 5}, {"D", 0}});
  EXPECT_NE(message.find("remainder by zero"), std::string::npos) << message;
  EXPECT_NE(message.find("N % D"), std::string::npos) << message;
  EXPECT_NE(error_of("5 % 2.5").find("integer"), std::string::npos);
}

TEST(Expression, CdivRoundsUpAndRejectsZero) {
  EXPECT_EQ(eval("cdiv(7, 2)"), 4);
  EXPECT_EQ(eval("cdiv(8, 2)"), 4);
  EXPECT_EQ(eval("cdiv(1, 128)"), 1);
  EXPECT_EQ(eval("cdiv(0, 128)"), 0);
  EXPECT_EQ(eval("cdiv(-7, 2)"), -3);  // ceil(-3.5)
  EXPECT_EQ(eval("cdiv(N, BN)", {{"N", 4097}, {"BN", 128}}), 33);
  EXPECT_NE(error_of("cdiv(N, 0)", {{"N", 3}}).find("cdiv by zero"), std::string::npos);
}

TEST(Expression, FloorCeilAndPow2) {
  EXPECT_EQ(eval("floor(2.5)"), 2);
  EXPECT_EQ(eval("floor(-2.5)"), -3);
  EXPECT_EQ(eval("ceil(2.1)"), 3);
  EXPECT_EQ(eval("ceil(4)"), 4);
  for (double power : {1.0, 2.0, 64.0, 1024.0, 4294967296.0})
    EXPECT_EQ(eval("pow2(x)", {{"x", power}}), 1);
  for (double other : {0.0, -4.0, 3.0, 48.0, 2.5}) EXPECT_EQ(eval("pow2(x)", {{"x", other}}), 0);
}

TEST(Expression, LogicComparisonsAndTernary) {
  EXPECT_EQ(eval("1 && 0"), 0);
  EXPECT_EQ(eval("1 || 0"), 1);
  EXPECT_EQ(eval("3 <= 2"), 0);
  EXPECT_EQ(eval("3 >= 3"), 1);
  EXPECT_EQ(eval("3 != 2"), 1);
  EXPECT_EQ(eval("3 == 2"), 0);
  EXPECT_EQ(eval("S > 1 ? M*N*S : 1", {{"S", 4}, {"M", 2}, {"N", 3}}), 24);
  EXPECT_EQ(eval("S > 1 ? M*N*S : 1", {{"S", 1}, {"M", 2}, {"N", 3}}), 1);
  // The branch not taken is not evaluated: no remainder-by-zero here.
  EXPECT_EQ(eval("D > 0 ? N % D : 0", {{"D", 0}, {"N", 5}}), 0);
  EXPECT_EQ(eval("BM*BN >= 64*64 && STAGES <= 4", {{"BM", 64}, {"BN", 64}, {"STAGES", 4}}), 1);
}

TEST(Expression, UnknownVariableNamesTheVariableAndTheExpression) {
  const std::string message = error_of("M*N + Q", {{"M", 1}, {"N", 2}});
  EXPECT_NE(message.find("'Q'"), std::string::npos) << message;
  EXPECT_NE(message.find("M*N + Q"), std::string::npos) << message;
}

TEST(Expression, VariablesListsEachNameOnce) {
  std::vector<std::string> names =
      Expression("STAGES*(BM+BN)*BK*elem_bytes <= BM*smem_optin").variables();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"BK", "BM", "BN", "STAGES", "elem_bytes", "smem_optin"}));
  EXPECT_TRUE(Expression("2^31").variables().empty());
}

TEST(Expression, ParseErrorsThrowAtConstruction) {
  EXPECT_THROW(Expression("1 +"), ExpressionError);
  EXPECT_THROW(Expression("(1"), ExpressionError);
  EXPECT_THROW(Expression(""), ExpressionError);
  EXPECT_THROW(Expression("   "), ExpressionError);
  EXPECT_THROW(Expression("nosuchfn(1)"), ExpressionError);
  try {
    Expression("BM +* 2");
    FAIL() << "expected a parse error";
  } catch (const ExpressionError& e) {
    EXPECT_NE(std::string(e.what()).find("BM +* 2"), std::string::npos) << e.what();
  }
}

TEST(Expression, AssignmentIsRejectedAsATypoForEquality) {
  EXPECT_THROW(Expression("M = 4"), ExpressionError);
  EXPECT_NO_THROW(Expression("M == 4"));
  EXPECT_NO_THROW(Expression("M <= 4 && M >= 1 && M != 2"));
}

TEST(Expression, SeveralResultsAndNonFiniteValuesAreErrors) {
  EXPECT_NE(error_of("1, 2").find("several values"), std::string::npos);
  EXPECT_NE(error_of("M / 0", {{"M", 1}}).find("not finite"), std::string::npos);
}

TEST(Expression, EvaluateIntegerAcceptsIntegralValuesOnly) {
  EXPECT_EQ(Expression("2*M*N*K").evaluate_integer({{"M", 4096}, {"N", 4096}, {"K", 4096}}),
            2LL * 4096 * 4096 * 4096);
  EXPECT_EQ(Expression("(BM/3)*3").evaluate_integer({{"BM", 64}}), 64);  // rounding slack
  EXPECT_EQ(Expression("-5").evaluate_integer({}), -5);
  EXPECT_THROW(Expression("7/2").evaluate_integer({}), ExpressionError);
  EXPECT_THROW(Expression("2^70").evaluate_integer({}), ExpressionError);
}

TEST(Expression, CopiesShareTheParsedProgramAndStayIndependentOfBindings) {
  const Expression original("A*B");
  const Expression copy = original;
  EXPECT_EQ(original.evaluate({{"A", 2}, {"B", 3}}), 6);
  EXPECT_EQ(copy.evaluate({{"A", 5}, {"B", 7}}), 35);
  EXPECT_EQ(original.evaluate({{"A", 2}, {"B", 3}}), 6);
  EXPECT_EQ(copy.text(), "A*B");
}

TEST(Expression, ConcurrentEvaluationGivesEachCallerItsOwnResult) {
  const Expression square("x*x + 1");
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const double x = t * 10000 + i;
        if (square.evaluate({{"x", x}}) != x * x + 1) ++wrong[t];
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace kt
