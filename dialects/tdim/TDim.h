//===- TDim.h - symbolic dimension algebra ----------------------*- C++ -*-===//
//
// TDim is tract's symbolic dimension: an integer expression over named
// symbols (`S`, `P`, `B`) with +, -, *, floor division by a positive
// constant, min, max and broadcast (`#`). Expressions are kept in a canonical
// form (a polynomial over atoms) so that equal expressions compare equal:
// `(S+3)-3 == S`, `2*S+S == 3*S`, `(4*S+2)/4 == S`.
//
// The library depends on LLVM's support library only; the dialect stores
// TDims in attributes and asks them questions instead of doing arithmetic on
// shapes itself.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TDIM_TDIM_H
#define DIALECTS_TDIM_TDIM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlir::tract {

/// Values of symbols, for evaluation.
using SymbolValues = std::map<std::string, int64_t, std::less<>>;

/// The ceiling (exclusive) on a dim a model gives or scales: 2^31. Constants
/// stay below it, so that sums and products of a few of them never wrap 64
/// bits; a model's real dims are far smaller.
inline constexpr int64_t kDimCeiling = int64_t(1) << 31;

class TDim;
/// Expressions to put in place of symbols (`S` -> `2*T+1`).
using SymbolDims = std::map<std::string, TDim, std::less<>>;

class TDim {
public:
  /// The constant 0.
  TDim();
  /// An integer constant.
  TDim(int64_t value);

  /// A named symbol. The name must be an identifier ([A-Za-z_][A-Za-z0-9_]*).
  static TDim symbol(llvm::StringRef name);

  /// Parses tract's syntax: integers, symbols, `+ - *`, `/` by a positive
  /// constant, `min(a,b,…)`, `max(a,b,…)`, `a#b` (broadcast, lowest
  /// precedence) and parentheses. On failure returns nullopt and, if `error`
  /// is given, says what was expected where.
  static std::optional<TDim> parse(llvm::StringRef text,
                                   std::string *error = nullptr);

  TDim operator+(const TDim &other) const;
  TDim operator-(const TDim &other) const;
  TDim operator*(const TDim &other) const;
  TDim operator-() const;
  TDim &operator+=(const TDim &other) { return *this = *this + other; }
  TDim &operator-=(const TDim &other) { return *this = *this - other; }
  TDim &operator*=(const TDim &other) { return *this = *this * other; }

  /// Floor division by a positive constant (rounds toward minus infinity).
  TDim floorDiv(int64_t divisor) const;
  /// Ceiling division by a positive constant.
  TDim ceilDiv(int64_t divisor) const;
  static TDim min(llvm::ArrayRef<TDim> operands);
  static TDim max(llvm::ArrayRef<TDim> operands);
  /// Numpy broadcast of two dims: equal dims, or a 1 against anything.
  /// Returns nullopt when the dims are known not to broadcast (two distinct
  /// constants, neither of them 1).
  static std::optional<TDim> broadcast(const TDim &lhs, const TDim &rhs);
  /// The broadcast of all of `operands` (1 if there is none), in
  /// O(n log n) comparisons.
  static std::optional<TDim> broadcast(llvm::ArrayRef<TDim> operands);

  bool isConstant() const;
  std::optional<int64_t> getConstant() const;
  /// The symbol's name if this expression is exactly one symbol.
  std::optional<std::string> getSymbolName() const;
  /// Adds the names of the symbols that occur in the expression to `names`.
  void collectSymbols(std::set<std::string> &names) const;

  /// The value under `values`, or nullopt if a symbol has no value, a
  /// broadcast of the given values is invalid or the value overflows int64.
  std::optional<int64_t> eval(const SymbolValues &values) const;
  /// Replaces `symbol` by `replacement` everywhere and re-simplifies.
  TDim substitute(llvm::StringRef symbol, const TDim &replacement) const;
  /// Replaces every symbol that has a value in `values`.
  TDim substitute(const SymbolValues &values) const;
  /// Replaces every symbol that has an expression in `dims`, all at once:
  /// symbols inside the replacements are not replaced again, so
  /// `{S: T, T: S}` swaps them.
  TDim substitute(const SymbolDims &dims) const;

  /// tract's syntax, parseable by parse(): `S+P`, `(S-3)/4`, `2*S`.
  std::string toString() const;

  /// A total order over canonical forms (for sorting and uniquing).
  int compare(const TDim &other) const;
  bool operator==(const TDim &other) const { return compare(other) == 0; }
  bool operator!=(const TDim &other) const { return compare(other) != 0; }
  bool operator<(const TDim &other) const { return compare(other) < 0; }
  friend llvm::hash_code hash_value(const TDim &dim);

  /// The canonical form's structure, for code generation: a sum of terms,
  /// each a coefficient times a product of atoms (repeated atoms are powers).
  enum class AtomKind { Symbol, Div, Min, Max, Broadcast };
  struct AtomView {
    AtomKind kind;
    llvm::StringRef name;      ///< Symbol
    llvm::ArrayRef<TDim> args; ///< Div: {numerator}; others: operands
    int64_t divisor = 1;       ///< Div
  };
  struct TermView {
    int64_t coefficient;
    std::vector<AtomView> atoms;
  };
  /// The terms, valid while this TDim lives.
  std::vector<TermView> getTerms() const;

  struct Poly;

private:
  explicit TDim(std::shared_ptr<const Poly> poly) : poly(std::move(poly)) {}
  std::shared_ptr<const Poly> poly;
  friend struct TDimBuilder;
};

/// The operations that compute a TDim in some other domain (IR values of
/// generated code): see buildDim. A callback may fail by returning an empty
/// value (`!value`), which stops the build.
template <typename T> struct DimAlgebra {
  virtual ~DimAlgebra() = default;
  virtual T constant(int64_t value) = 0;
  virtual T symbol(llvm::StringRef name) = 0;
  virtual T add(T lhs, T rhs) = 0;
  virtual T mul(T lhs, T rhs) = 0;
  /// Floor division by a positive constant.
  virtual T floorDiv(T value, int64_t divisor) = 0;
  virtual T min(T lhs, T rhs) = 0;
  virtual T max(T lhs, T rhs) = 0;
  /// The numpy broadcast of two dims: the one that is not 1.
  virtual T broadcast(T lhs, T rhs) = 0;
};

/// `dim` computed with `algebra`, term by term (coefficient times atoms,
/// summed); empty if a callback fails.
template <typename T> T buildDim(const TDim &dim, DimAlgebra<T> &algebra) {
  if (std::optional<int64_t> value = dim.getConstant())
    return algebra.constant(*value);
  T sum{};
  bool first = true;
  for (const TDim::TermView &term : dim.getTerms()) {
    T product{};
    for (const TDim::AtomView &atom : term.atoms) {
      T value{};
      switch (atom.kind) {
      case TDim::AtomKind::Symbol:
        value = algebra.symbol(atom.name);
        break;
      case TDim::AtomKind::Div:
        value = buildDim(atom.args[0], algebra);
        if (value)
          value = algebra.floorDiv(value, atom.divisor);
        break;
      case TDim::AtomKind::Min:
      case TDim::AtomKind::Max:
      case TDim::AtomKind::Broadcast:
        for (const TDim &arg : atom.args) {
          T operand = buildDim(arg, algebra);
          if (!operand)
            return T{};
          value = !value ? operand
                  : atom.kind == TDim::AtomKind::Min
                      ? algebra.min(value, operand)
                  : atom.kind == TDim::AtomKind::Max
                      ? algebra.max(value, operand)
                      : algebra.broadcast(value, operand);
        }
        break;
      }
      if (!value)
        return T{};
      product = product ? algebra.mul(product, value) : value;
      if (!product)
        return T{};
    }
    T termValue =
        term.atoms.empty() ? algebra.constant(term.coefficient)
        : term.coefficient == 1
            ? product
            : algebra.mul(product, algebra.constant(term.coefficient));
    if (!termValue)
      return T{};
    sum = first ? termValue : algebra.add(sum, termValue);
    if (!sum)
      return T{};
    first = false;
  }
  return sum;
}

/// A relation between two dims, `A op B`, as written in an assertion.
struct DimRelation {
  enum class Kind { GreaterOrEqual, Greater, LessOrEqual, Less, Equal };
  TDim lhs;
  Kind kind;
  TDim rhs;

  /// Parses `A op B` with op one of >=, >, <=, <, == (or =).
  static std::optional<DimRelation> parse(llvm::StringRef text,
                                          std::string *error = nullptr);
  /// The constraints `expr >= 0` it stands for (two for `==`).
  std::vector<TDim> constraints() const;
  /// The relation with `dims` substituted on both sides.
  DimRelation substitute(const SymbolDims &dims) const;
  /// Whether it holds, when both sides are constant.
  std::optional<bool> evaluate() const;
  /// `A op B`, parseable by parse().
  std::string toString() const;
};

/// An interval of possible values; an absent end is unbounded.
struct DimBounds {
  std::optional<int64_t> lower;
  std::optional<int64_t> upper;
};

/// What is known about a model's symbols: its assertions (`S >= 1`,
/// `S+P < 4096`) and named scenarios (`tg: S == 1`). Every symbol is a
/// dimension, so it is also known to be non-negative.
class SymbolScope {
public:
  /// Adds an assertion `A op B` with op one of >=, >, <=, <, ==. Returns
  /// false (and the reason in `error`) if it does not parse.
  bool addAssertion(llvm::StringRef text, std::string *error = nullptr);
  /// Adds `name: A op B`: an assertion that holds in scenario `name` only.
  bool addScenarioAssertion(llvm::StringRef text, std::string *error = nullptr);
  /// Parses an assertion `A op B` into the constraints `expr >= 0` it
  /// stands for (two for `==`), e.g. for code that checks it at run time.
  static bool parseAssertion(llvm::StringRef text, std::vector<TDim> &out,
                             std::string *error = nullptr);

  /// The assertions and scenario assertions as given, for export.
  llvm::ArrayRef<std::string> getAssertions() const { return assertionTexts; }
  llvm::ArrayRef<std::string> getScenarioAssertions() const {
    return scenarioTexts;
  }
  /// The first assertion (outside scenarios) that `values` violate, as
  /// written; assertions over symbols without a value are skipped.
  std::optional<std::string>
  findViolatedAssertion(const SymbolValues &values) const;

  /// Scenario names in the order they were first seen.
  std::vector<std::string> getScenarios() const;

  /// Bounds of `dim` from the assertions (plus those of `scenario`, if
  /// given). Sound but not complete: a bound may be missing or loose.
  DimBounds bounds(const TDim &dim, llvm::StringRef scenario = {}) const;
  bool proveNonNegative(const TDim &dim, llvm::StringRef scenario = {}) const;
  bool provePositive(const TDim &dim, llvm::StringRef scenario = {}) const;
  /// Proves `lhs >= rhs`.
  bool proveGreaterOrEqual(const TDim &lhs, const TDim &rhs,
                           llvm::StringRef scenario = {}) const;

  /// Simplifies min/max whose order the assertions decide, e.g.
  /// `min(S,4096)` to `S` under `S <= 4000`.
  TDim simplify(const TDim &dim, llvm::StringRef scenario = {}) const;

private:
  /// Constraints `expr >= 0` that hold in `scenario`.
  std::vector<TDim> constraints(llvm::StringRef scenario) const;

  std::vector<TDim> global; // expr >= 0
  std::vector<std::pair<std::string, TDim>> scenarioConstraints;
  std::vector<std::string> assertionTexts;
  std::vector<std::string> scenarioTexts;
};

/// `floor(dim * factor)`: for a constant dim, a size in [0, kDimCeiling). A
/// symbolic dim takes an integral factor, or one with a power of two up to
/// 2^16 as denominator (0.5, 0.25, 1.5...), so that the size stays an exact
/// expression. nullopt otherwise (resize scales from a model).
std::optional<TDim> floorScaled(const TDim &dim, double factor);

} // namespace mlir::tract

#endif // DIALECTS_TDIM_TDIM_H
