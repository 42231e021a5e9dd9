#include "dialects/tdim/TDim.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace mlir::tract;

namespace {

TDim dim(llvm::StringRef text) {
  std::string error;
  std::optional<TDim> parsed = TDim::parse(text, &error);
  EXPECT_TRUE(parsed) << text.str() << ": " << error;
  return parsed ? *parsed : TDim();
}

const TDim S = TDim::symbol("S");
const TDim P = TDim::symbol("P");

TEST(TDim, CanonicalFormsCompareEqual) {
  EXPECT_EQ((S + 3) - 3, S);
  EXPECT_EQ(S * 2 + S, S * 3);
  EXPECT_EQ((S * 4 + 2).floorDiv(4), S);
  EXPECT_EQ(S * P, P * S);
  EXPECT_EQ((S + P) * (S - P), S * S - P * P);
  EXPECT_EQ(S - S, TDim(0));
  EXPECT_EQ(dim("(S+3)-3"), dim("S"));
  EXPECT_EQ(dim("2*S+S"), dim("3*S"));
  EXPECT_EQ(dim("(4*S+2)/4"), dim("S"));
  EXPECT_EQ(dim("S+P"), dim("P+S"));
  EXPECT_NE(dim("S+1"), dim("S"));
  EXPECT_NE(S, P);
  // Equal dims hash equally, whatever way they were built.
  EXPECT_EQ(hash_value(dim("S+P")), hash_value(dim("P+S")));
  EXPECT_EQ(hash_value(dim("(4*S+2)/4+min(S,8)")),
            hash_value(S + TDim::min({TDim(8), S})));
}

TEST(TDim, Division) {
  EXPECT_EQ((S * 6 + 4).floorDiv(2), S * 3 + 2);
  // floor((2S+2)/4) == floor((S+1)/2): common factors go.
  EXPECT_EQ((S * 2 + 2).floorDiv(4), (S + 1).floorDiv(2));
  // Whole multiples come out of the division: (8S+9)/4 == 2S+2+(1/4).
  EXPECT_EQ((S * 8 + 9).floorDiv(4), S * 2 + 2);
  EXPECT_EQ((S * 8 + 11).floorDiv(4), S * 2 + 2 + (S * 0 + 3).floorDiv(4));
  EXPECT_EQ((S * 5 + 3).floorDiv(4), S + (S + 3).floorDiv(4));
  // Nested divisions merge.
  EXPECT_EQ((S - 3).floorDiv(4).floorDiv(2), (S - 3).floorDiv(8));
  EXPECT_EQ(TDim(-7).floorDiv(2), TDim(-4));
  EXPECT_EQ(S.ceilDiv(4), (S + 3).floorDiv(4));
  EXPECT_EQ(S.floorDiv(1), S);
}

TEST(TDim, MinMaxAndBroadcast) {
  EXPECT_EQ(TDim::min({S + 1, S}), S);
  EXPECT_EQ(TDim::max({S + 1, S, S - 4}), S + 1);
  EXPECT_EQ(TDim::min({TDim(3), TDim(5)}), TDim(3));
  EXPECT_EQ(TDim::min({S, TDim(8)}), TDim::min({TDim(8), S}));
  EXPECT_EQ(TDim::min({TDim::min({S, P}), TDim(8)}),
            TDim::min({S, P, TDim(8)}));
  EXPECT_EQ(TDim::broadcast(S, TDim(1)), S);
  EXPECT_EQ(TDim::broadcast(S, S), S);
  EXPECT_EQ(TDim::broadcast(S, TDim(4)), TDim(4));
  EXPECT_EQ(TDim::broadcast(TDim(3), TDim(4)), std::nullopt);
  EXPECT_EQ(TDim::broadcast(S, P), TDim::broadcast(P, S));
  // The n-ary form flattens, drops 1s and repeats, and is order-free.
  EXPECT_EQ(TDim::broadcast({S, P, TDim(1), S, P}), TDim::broadcast(P, S));
  EXPECT_EQ(TDim::broadcast({TDim::broadcast(S, P).value(), S}),
            TDim::broadcast(S, P));
  EXPECT_EQ(TDim::broadcast({S, TDim(4), P, TDim(4)}), TDim(4));
  EXPECT_EQ(TDim::broadcast({S, TDim(4), TDim(1), TDim(3)}), std::nullopt);
  EXPECT_EQ(TDim::broadcast(llvm::ArrayRef<TDim>{}), TDim(1));
  EXPECT_EQ(TDim::parse("S#P#S#1"), TDim::broadcast(S, P));
  std::string error;
  EXPECT_EQ(TDim::parse("S#3#P#4", &error), std::nullopt);
  EXPECT_NE(error.find("dims S, 3, P, 4 do not broadcast"), std::string::npos)
      << error;
}

TEST(TDim, PrintsTractSyntax) {
  EXPECT_EQ(S.toString(), "S");
  EXPECT_EQ(TDim(-12).toString(), "-12");
  EXPECT_EQ(TDim().toString(), "0");
  EXPECT_EQ((S * 2).toString(), "2*S");
  EXPECT_EQ((S - 3).toString(), "S-3");
  EXPECT_EQ((TDim(3) - S).toString(), "-S+3");
  EXPECT_EQ((S - 3).floorDiv(4).toString(), "(S-3)/4");
  EXPECT_EQ(S.floorDiv(4).toString(), "S/4");
  EXPECT_EQ((S.floorDiv(4) * 2).toString(), "2*(S/4)");
  EXPECT_EQ((-S.floorDiv(4)).toString(), "-(S/4)");
  EXPECT_EQ(TDim::min({S, TDim(8)}).toString(), "min(S,8)");
  EXPECT_EQ((S * P).toString(), "P*S");
  EXPECT_EQ((TDim::broadcast(S, P)->toString()), "P#S");
  EXPECT_EQ((*TDim::broadcast(S, P) + 1).toString(), "(P#S)+1");
  EXPECT_EQ(((S - 3).floorDiv(4) + 1).toString(), "(S+1)/4");
  EXPECT_EQ(((S - 3).floorDiv(4) + P).toString(), "P+(S-3)/4");
}

TEST(TDim, ParsePrintRoundTrip) {
  for (llvm::StringRef text :
       {"S", "S+P", "(S-3)/4", "2*S", "min(S,8)", "max(S,P+1)", "S#P",
        "-(S/4)+P", "2*((S+1)/3)", "S*S*P-7", "min(S#P,4)+max(1,S)",
        "(S+P)/2#B", "-S-P-1"}) {
    TDim parsed = dim(text);
    EXPECT_EQ(dim(parsed.toString()), parsed)
        << text.str() << " printed as " << parsed.toString();
  }
}

TEST(TDim, ParseErrorsSayWhereAndWhat) {
  std::string error;
  EXPECT_FALSE(TDim::parse("S/P", &error));
  EXPECT_EQ(error, "expected a positive constant divisor at column 3 in 'S/P'");
  EXPECT_FALSE(TDim::parse("S/0", &error));
  EXPECT_FALSE(TDim::parse("S+", &error));
  EXPECT_EQ(error, "expected a dim at column 3 in 'S+'");
  EXPECT_FALSE(TDim::parse("(S", &error));
  EXPECT_EQ(error, "expected ')' at column 3 in '(S'");
  EXPECT_FALSE(TDim::parse("S $ 2", &error));
  EXPECT_EQ(error, "unexpected '$' at column 3 in 'S $ 2'");
  EXPECT_FALSE(TDim::parse("99999999999999999999", &error));
  EXPECT_EQ(error, "integer out of range at column 1 in "
                   "'99999999999999999999'");
  EXPECT_FALSE(TDim::parse("3#4", &error));
  EXPECT_FALSE(TDim::parse("", &error));
}

TEST(TDim, ParseBoundsNesting) {
  // Deep nesting is an error, not a stack overflow.
  std::string deep = std::string(100000, '(') + "S" + std::string(100000, ')');
  std::string error;
  EXPECT_FALSE(TDim::parse(deep, &error));
  EXPECT_NE(error.find("the dim nests deeper than 256 levels"),
            std::string::npos);
  std::string ok = std::string(200, '(') + "S" + std::string(200, ')');
  EXPECT_TRUE(TDim::parse(ok));
}

TEST(TDim, EvalAndSubstitute) {
  TDim e = dim("(S-3)/4+2*P");
  EXPECT_EQ(e.eval({{"S", 11}, {"P", 5}}), 12);
  EXPECT_EQ(e.eval({{"S", 1}, {"P", 0}}), -1); // floor(-2/4) == -1
  EXPECT_EQ(e.eval({{"S", 11}}), std::nullopt);
  EXPECT_EQ(e.substitute("S", TDim(11)), dim("2*P+2"));
  EXPECT_EQ(e.substitute("P", S), dim("(S-3)/4+2*S"));
  EXPECT_EQ(e.substitute("S", P * 4 + 3), P * 3);
  EXPECT_EQ(e.substitute(SymbolValues{{"S", 7}, {"P", 1}}), TDim(3));
  // Expressions replace symbols all at once.
  EXPECT_EQ(e.substitute(SymbolDims{{"S", P * 4 + 3}, {"P", TDim(1)}}), P + 2);
  EXPECT_EQ(dim("S-2*P").substitute(SymbolDims{{"S", P}, {"P", S}}),
            dim("P-2*S"));
  EXPECT_EQ(dim("min(S,8)+(S#P)").substitute(SymbolDims{{"S", TDim(1)}}),
            dim("P+1"));
  EXPECT_EQ(dim("S#P").eval({{"S", 1}, {"P", 9}}), 9);
  EXPECT_EQ(dim("S#P").eval({{"S", 2}, {"P", 9}}), std::nullopt);
  std::set<std::string> names;
  dim("min(S,B)+(P-1)/2").collectSymbols(names);
  EXPECT_EQ(names, (std::set<std::string>{"B", "P", "S"}));
  EXPECT_EQ(S.getSymbolName(), "S");
  EXPECT_EQ((S + 1).getSymbolName(), std::nullopt);
}

TEST(SymbolScope, ProvesFromAssertions) {
  SymbolScope scope;
  // Symbols are dims: non-negative without any assertion.
  EXPECT_TRUE(scope.proveNonNegative(S));
  EXPECT_FALSE(scope.provePositive(S));
  ASSERT_TRUE(scope.addAssertion("S >= 1"));
  ASSERT_TRUE(scope.addAssertion("S <= 32000"));
  ASSERT_TRUE(scope.addAssertion("S+P < 4096"));
  EXPECT_TRUE(scope.provePositive(S));
  EXPECT_TRUE(scope.proveNonNegative(dim("S-1")));
  EXPECT_FALSE(scope.proveNonNegative(dim("S-2")));
  EXPECT_TRUE(scope.provePositive(dim("(S+3)/4")));
  EXPECT_TRUE(scope.proveGreaterOrEqual(TDim(4095), S + P));
  EXPECT_TRUE(scope.provePositive(dim("4096-S")));
  EXPECT_FALSE(scope.proveGreaterOrEqual(TDim(4094), S + P));
  DimBounds b = scope.bounds(dim("2*S+1"));
  EXPECT_EQ(b.lower, 3);
  EXPECT_EQ(b.upper, 8191); // S+P < 4096 and P >= 0 bound S by 4095
  EXPECT_EQ(scope.bounds(P).upper, 4094);
  EXPECT_EQ(scope.simplify(dim("min(S,32000)+max(S,0)")), S * 2);
  EXPECT_EQ(scope.simplify(dim("min(S,P)")), dim("min(S,P)"));
  EXPECT_EQ(scope.getAssertions().size(), 3u);
}

TEST(SymbolScope, Scenarios) {
  SymbolScope scope;
  ASSERT_TRUE(scope.addAssertion("S >= 1"));
  ASSERT_TRUE(scope.addScenarioAssertion("tg: S==1"));
  ASSERT_TRUE(scope.addScenarioAssertion("pp: P==0"));
  EXPECT_EQ(scope.getScenarios(), (std::vector<std::string>{"tg", "pp"}));
  DimBounds tg = scope.bounds(S, "tg");
  EXPECT_EQ(tg.lower, 1);
  EXPECT_EQ(tg.upper, 1);
  EXPECT_EQ(scope.bounds(S).upper, std::nullopt);
  EXPECT_TRUE(scope.proveNonNegative(dim("1-S"), "tg"));
  EXPECT_FALSE(scope.proveNonNegative(dim("1-S")));
  EXPECT_TRUE(scope.proveNonNegative(dim("-P"), "pp"));
  EXPECT_EQ(scope.simplify(dim("max(S,P+1)"), "pp"), S);

  std::string error;
  EXPECT_FALSE(scope.addAssertion("S", &error));
  EXPECT_EQ(error, "expected a relation (>=, >, <=, <, ==) in 'S'");
  EXPECT_FALSE(scope.addScenarioAssertion("S==1", &error));
  EXPECT_EQ(error, "expected 'scenario: relation' in 'S==1'");
}

TEST(TDim, EvalRefusesOverflow) {
  SymbolValues values{{"S", int64_t(1) << 40}, {"P", INT64_MAX}};
  EXPECT_EQ(dim("S*S").eval(values), std::nullopt);
  EXPECT_EQ(dim("P+1").eval(values), std::nullopt);
  EXPECT_EQ(dim("2*P").eval(values), std::nullopt);
  EXPECT_EQ(dim("P-1").eval(values), INT64_MAX - 1);
  EXPECT_EQ(dim("S*4").eval(values), int64_t(1) << 42);
}

TEST(TDim, FloorScaledStaysBelowTheCeiling) {
  EXPECT_EQ(floorScaled(dim("10"), 0.55), dim("5"));
  EXPECT_EQ(floorScaled(dim("10"), 0.0), dim("0"));
  EXPECT_EQ(floorScaled(dim("S"), 2.0), dim("2*S"));
  EXPECT_EQ(floorScaled(dim("S"), 1.5), dim("(3*S)/2"));
  EXPECT_EQ(floorScaled(dim("1024"), double(kDimCeiling) / 1024), std::nullopt);
  EXPECT_EQ(floorScaled(dim("3"), 1e300), std::nullopt);
  EXPECT_EQ(floorScaled(dim("3"), -1.0), std::nullopt);
  EXPECT_EQ(floorScaled(dim("S"), -2.0), std::nullopt);
  EXPECT_EQ(floorScaled(dim("S"), 0.3), std::nullopt);
  EXPECT_EQ(floorScaled(dim("3"), std::nan("")), std::nullopt);
}

TEST(SymbolScope, ParsesAssertionsIntoConstraints) {
  std::vector<TDim> constraints;
  ASSERT_TRUE(SymbolScope::parseAssertion("S+P < 4096", constraints));
  ASSERT_TRUE(SymbolScope::parseAssertion("2*S == (P+1)/2", constraints));
  ASSERT_EQ(constraints.size(), 3u);
  EXPECT_EQ(constraints[0], dim("4095-S-P"));
  EXPECT_EQ(constraints[1], dim("2*S-(P+1)/2"));
  EXPECT_EQ(constraints[2], dim("(P+1)/2-2*S"));
  std::string error;
  EXPECT_FALSE(SymbolScope::parseAssertion("S", constraints, &error));
  EXPECT_EQ(error, "expected a relation (>=, >, <=, <, ==) in 'S'");
}

//===----------------------------------------------------------------------===//
// Randomized: simplification never changes an expression's value.
//===----------------------------------------------------------------------===//

/// A plain expression tree, evaluated without any simplification.
struct RefExpr {
  enum Kind { Const, Sym, Add, Sub, Mul, Div, Min, Max, Bcast } kind;
  int64_t value = 0;
  std::string name;
  std::vector<RefExpr> children;

  /// Folds the tree with `algebra`: its constant, symbol and floor
  /// division, and its operation for each binary kind; nullopt where the
  /// algebra refuses.
  template <typename Algebra>
  auto fold(const Algebra &algebra) const
      -> std::optional<decltype(algebra.constant(0))> {
    if (kind == Const)
      return algebra.constant(value);
    if (kind == Sym)
      return algebra.symbol(name);
    auto a = children[0].fold(algebra);
    if (!a)
      return std::nullopt;
    if (kind == Div)
      return algebra.floorDiv(*a, value);
    auto b = children[1].fold(algebra);
    if (!b)
      return std::nullopt;
    return algebra.binary(kind, *a, *b);
  }

  /// Plain integer arithmetic, the reference.
  struct Reference {
    const SymbolValues &values;
    int64_t constant(int64_t value) const { return value; }
    int64_t symbol(const std::string &name) const { return values.at(name); }
    int64_t floorDiv(int64_t a, int64_t divisor) const {
      int64_t q = a / divisor;
      return (a % divisor != 0 && a < 0) ? q - 1 : q;
    }
    std::optional<int64_t> binary(Kind kind, int64_t a, int64_t b) const {
      if (kind == Bcast) {
        if (a == 1 || a == b)
          return b;
        return b == 1 ? std::optional<int64_t>(a) : std::nullopt;
      }
      return kind == Add   ? a + b
             : kind == Sub ? a - b
             : kind == Mul ? a * b
             : kind == Min ? std::min(a, b)
                           : std::max(a, b);
    }
  };

  /// TDim's operators, the algebra under test.
  struct Build {
    TDim constant(int64_t value) const { return TDim(value); }
    TDim symbol(const std::string &name) const { return TDim::symbol(name); }
    TDim floorDiv(const TDim &a, int64_t divisor) const {
      return a.floorDiv(divisor);
    }
    std::optional<TDim> binary(Kind kind, const TDim &a, const TDim &b) const {
      if (kind == Bcast)
        return TDim::broadcast(a, b);
      return kind == Add   ? a + b
             : kind == Sub ? a - b
             : kind == Mul ? a * b
             : kind == Min ? TDim::min({a, b})
                           : TDim::max({a, b});
    }
  };

  std::optional<int64_t> eval(const SymbolValues &values) const {
    return fold(Reference{values});
  }

  /// The same expression built through TDim's operators; nullopt when the
  /// algebra refuses it (a broadcast of two incompatible constants).
  std::optional<TDim> build() const { return fold(Build{}); }
};

RefExpr randomExpr(std::mt19937 &rng, int depth) {
  std::uniform_int_distribution<int> pick(0, depth > 0 ? 9 : 1);
  std::uniform_int_distribution<int64_t> constant(-6, 12);
  const char *symbols[] = {"S", "P", "B"};
  int choice = pick(rng);
  if (choice == 0)
    return {RefExpr::Const, constant(rng), "", {}};
  if (choice == 1)
    return {RefExpr::Sym, 0, symbols[rng() % 3], {}};
  static const RefExpr::Kind kinds[] = {
      RefExpr::Add, RefExpr::Add, RefExpr::Sub, RefExpr::Mul,
      RefExpr::Div, RefExpr::Min, RefExpr::Max, RefExpr::Bcast};
  RefExpr::Kind kind = kinds[choice - 2];
  RefExpr e{kind, 0, "", {randomExpr(rng, depth - 1)}};
  if (kind == RefExpr::Div)
    e.value = 1 + rng() % 6;
  else
    e.children.push_back(randomExpr(rng, depth - 1));
  return e;
}

TEST(TDimRandomized, SimplificationPreservesValues) {
  std::mt19937 rng(20261121);
  std::uniform_int_distribution<int64_t> symbolValue(-5, 40);
  int checked = 0;
  for (int i = 0; i < 3000; ++i) {
    RefExpr expr = randomExpr(rng, 4);
    std::optional<TDim> built = expr.build();
    if (!built)
      continue;
    std::optional<TDim> reparsed = TDim::parse(built->toString());
    ASSERT_TRUE(reparsed) << built->toString();
    ASSERT_EQ(*reparsed, *built) << built->toString();
    for (int j = 0; j < 8; ++j) {
      SymbolValues values{{"S", symbolValue(rng)},
                          {"P", symbolValue(rng)},
                          {"B", symbolValue(rng)}};
      std::optional<int64_t> expected = expr.eval(values);
      if (!expected)
        continue; // an invalid broadcast: any answer will do
      ASSERT_EQ(built->eval(values), expected)
          << built->toString() << " at S=" << values["S"]
          << " P=" << values["P"] << " B=" << values["B"];
      ASSERT_EQ(built->substitute(values).getConstant(), expected)
          << built->toString();
      ASSERT_EQ(built->substitute("S", TDim(values["S"])).eval(values),
                expected)
          << built->toString();
      ++checked;
    }
  }
  EXPECT_GT(checked, 10000);
}

} // namespace

TEST(DimRelation, ParseSubstituteEvaluate) {
  std::optional<DimRelation> relation = DimRelation::parse("S+P < 4096");
  ASSERT_TRUE(relation);
  EXPECT_EQ(relation->toString(), "P+S < 4096");
  EXPECT_EQ(relation->constraints(), std::vector<TDim>{dim("4095-S-P")});
  EXPECT_EQ(relation->evaluate(), std::nullopt);
  DimRelation set = relation->substitute(SymbolDims{{"S", TDim(96)}});
  EXPECT_EQ(set.toString(), "P+96 < 4096");
  EXPECT_EQ(set.substitute(SymbolDims{{"P", TDim(4000)}}).evaluate(), false);
  EXPECT_EQ(set.substitute(SymbolDims{{"P", TDim(3999)}}).evaluate(), true);
  std::optional<DimRelation> equal = DimRelation::parse("2*S = T");
  ASSERT_TRUE(equal);
  EXPECT_EQ(equal->toString(), "2*S == T");
  EXPECT_EQ(equal->constraints().size(), 2u);
  EXPECT_EQ(
      equal->substitute(SymbolDims{{"S", TDim(2)}, {"T", TDim(5)}}).evaluate(),
      false);
  std::string error;
  EXPECT_FALSE(DimRelation::parse("S", &error));
  EXPECT_EQ(error, "expected a relation (>=, >, <=, <, ==) in 'S'");
}
