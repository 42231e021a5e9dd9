//===- TDim.cpp - symbolic dimension algebra ------------------------------===//
//
// Canonical form: a TDim is a polynomial, a sorted list of terms
// `coefficient * atom * atom * …` with non-zero coefficients, the constant
// term (no atoms) last. Atoms are symbols and the non-polynomial operators:
// floor division of a polynomial by a constant, min, max and broadcast, each
// over canonical operands. Atoms are ordered totally, so two polynomials are
// equal exactly when their term lists are.
//
//===----------------------------------------------------------------------===//

#include "dialects/tdim/TDim.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir::tract;

//===----------------------------------------------------------------------===//
// Representation
//===----------------------------------------------------------------------===//

namespace {

using AtomKind = TDim::AtomKind;

struct Atom {
  AtomKind kind;
  std::string name;       // Symbol
  std::vector<TDim> args; // Div: {numerator}; Min/Max/Broadcast: operands
  int64_t divisor = 1;    // Div
};

using AtomPtr = std::shared_ptr<const Atom>;

struct Term {
  std::vector<AtomPtr> atoms; // sorted; repeated atoms are powers
  int64_t coefficient;
};

// Integer arithmetic wraps instead of overflowing into undefined behaviour;
// dims never come near the limits, and a wrapped value is still a value.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}
int64_t floorDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int compareAtoms(const Atom &a, const Atom &b);

int compareAtomLists(llvm::ArrayRef<AtomPtr> a, llvm::ArrayRef<AtomPtr> b) {
  // Higher degree first, then lexicographically.
  if (a.size() != b.size())
    return a.size() > b.size() ? -1 : 1;
  for (auto [x, y] : llvm::zip(a, b))
    if (int c = compareAtoms(*x, *y))
      return c;
  return 0;
}

int compareDimLists(llvm::ArrayRef<TDim> a, llvm::ArrayRef<TDim> b) {
  if (a.size() != b.size())
    return a.size() < b.size() ? -1 : 1;
  for (auto [x, y] : llvm::zip(a, b))
    if (int c = x.compare(y))
      return c;
  return 0;
}

int compareAtoms(const Atom &a, const Atom &b) {
  if (a.kind != b.kind)
    return a.kind < b.kind ? -1 : 1;
  if (a.kind == AtomKind::Symbol)
    return a.name.compare(b.name) < 0 ? -1 : (a.name == b.name ? 0 : 1);
  if (a.kind == AtomKind::Div && a.divisor != b.divisor)
    return a.divisor < b.divisor ? -1 : 1;
  return compareDimLists(a.args, b.args);
}

bool atomLess(const AtomPtr &a, const AtomPtr &b) {
  return compareAtoms(*a, *b) < 0;
}

} // namespace

struct TDim::Poly {
  std::vector<Term> terms; // canonical: sorted, merged, no zero coefficient
};

namespace mlir::tract {

/// Builds canonical polynomials; the one place that touches TDim's insides.
struct TDimBuilder {
  static TDim fromTerms(std::vector<Term> terms) {
    llvm::sort(terms, [](const Term &a, const Term &b) {
      return compareAtomLists(a.atoms, b.atoms) < 0;
    });
    std::vector<Term> merged;
    for (Term &term : terms) {
      if (!merged.empty() &&
          compareAtomLists(merged.back().atoms, term.atoms) == 0)
        merged.back().coefficient =
            wrapAdd(merged.back().coefficient, term.coefficient);
      else
        merged.push_back(std::move(term));
      if (merged.back().coefficient == 0)
        merged.pop_back();
    }
    auto poly = std::make_shared<TDim::Poly>();
    poly->terms = std::move(merged);
    return TDim(std::shared_ptr<const TDim::Poly>(std::move(poly)));
  }

  static TDim fromAtom(Atom atom) {
    Term term{{std::make_shared<const Atom>(std::move(atom))}, 1};
    return fromTerms({std::move(term)});
  }

  static const std::vector<Term> &terms(const TDim &dim) {
    return dim.poly->terms;
  }

  /// The atom if `dim` is exactly one atom with coefficient 1.
  static const Atom *singleAtom(const TDim &dim) {
    const std::vector<Term> &t = terms(dim);
    if (t.size() != 1 || t[0].coefficient != 1 || t[0].atoms.size() != 1)
      return nullptr;
    return t[0].atoms[0].get();
  }
};

} // namespace mlir::tract

using B = TDimBuilder;

//===----------------------------------------------------------------------===//
// Construction and arithmetic
//===----------------------------------------------------------------------===//

TDim::TDim() : TDim(int64_t(0)) {}

TDim::TDim(int64_t value) {
  auto p = std::make_shared<TDim::Poly>();
  if (value != 0)
    p->terms.push_back(Term{{}, value});
  poly = std::move(p);
}

TDim TDim::symbol(llvm::StringRef name) {
  Atom atom{AtomKind::Symbol, name.str(), {}, 1};
  return B::fromAtom(std::move(atom));
}

TDim TDim::operator+(const TDim &other) const {
  std::vector<Term> terms = poly->terms;
  llvm::append_range(terms, other.poly->terms);
  return B::fromTerms(std::move(terms));
}

TDim TDim::operator-() const {
  std::vector<Term> terms = poly->terms;
  for (Term &term : terms)
    term.coefficient = wrapMul(term.coefficient, -1);
  return B::fromTerms(std::move(terms));
}

TDim TDim::operator-(const TDim &other) const { return *this + (-other); }

TDim TDim::operator*(const TDim &other) const {
  std::vector<Term> terms;
  for (const Term &a : poly->terms) {
    for (const Term &b : other.poly->terms) {
      Term product{a.atoms, wrapMul(a.coefficient, b.coefficient)};
      llvm::append_range(product.atoms, b.atoms);
      llvm::sort(product.atoms, atomLess);
      terms.push_back(std::move(product));
    }
  }
  return B::fromTerms(std::move(terms));
}

TDim TDim::floorDiv(int64_t divisor) const {
  assert(divisor > 0 && "TDim division by a non-positive constant");
  // floor(g*X / (g*q)) == floor(X / q): divide out the common factor.
  // In unsigned arithmetic: |INT64_MIN| has no int64_t; the gcd divides
  // `divisor`, so it fits.
  uint64_t gcd = divisor;
  for (const Term &term : poly->terms) {
    uint64_t magnitude = term.coefficient < 0
                             ? 0 - static_cast<uint64_t>(term.coefficient)
                             : static_cast<uint64_t>(term.coefficient);
    gcd = std::gcd(gcd, magnitude);
  }
  int64_t common = static_cast<int64_t>(gcd);
  if (common > 1) {
    std::vector<Term> reduced = poly->terms;
    for (Term &term : reduced)
      term.coefficient /= common;
    divisor /= common;
    if (divisor == 1)
      return B::fromTerms(std::move(reduced));
    return B::fromTerms(std::move(reduced)).floorDiv(divisor);
  }
  if (divisor == 1)
    return *this;
  // Split P = q*A + R with R's coefficients in [0, q): since A is an integer,
  // floor(P/q) == A + floor(R/q).
  std::vector<Term> whole, rest;
  for (const Term &term : poly->terms) {
    int64_t quotient = floorDivide(term.coefficient, divisor);
    // c mod q in [0, q), without forming quotient * q (which can overflow).
    int64_t remainder = term.coefficient % divisor;
    if (remainder < 0)
      remainder += divisor;
    if (quotient)
      whole.push_back(Term{term.atoms, quotient});
    if (remainder)
      rest.push_back(Term{term.atoms, remainder});
  }
  TDim quotient = B::fromTerms(std::move(whole));
  TDim remainder = B::fromTerms(std::move(rest));
  if (remainder.isConstant()) // 0 <= R < q
    return quotient;
  // floor((floor(X/a) + c)/b) == floor((X + c*a)/(a*b)).
  int64_t offset = 0;
  std::vector<Term> variable;
  for (const Term &term : B::terms(remainder)) {
    if (term.atoms.empty())
      offset = term.coefficient;
    else
      variable.push_back(term);
  }
  // (Unless a*b overflows: the division stays nested then.)
  int64_t combined;
  if (const Atom *atom = B::singleAtom(B::fromTerms(variable));
      atom && atom->kind == AtomKind::Div &&
      !__builtin_mul_overflow(atom->divisor, divisor, &combined))
    return quotient + (atom->args[0] + TDim(wrapMul(offset, atom->divisor)))
                          .floorDiv(combined);
  Atom atom{AtomKind::Div, "", {remainder}, divisor};
  return quotient + B::fromAtom(std::move(atom));
}

TDim TDim::ceilDiv(int64_t divisor) const {
  return (*this + TDim(divisor - 1)).floorDiv(divisor);
}

/// min or max: flattens nested ones, folds constants, drops operands that a
/// constant difference decides, and sorts what is left.
static TDim minOrMax(llvm::ArrayRef<TDim> operands, bool isMin) {
  assert(!operands.empty() && "min/max of nothing");
  AtomKind kind = isMin ? AtomKind::Min : AtomKind::Max;
  std::vector<TDim> flat;
  for (const TDim &operand : operands) {
    if (const Atom *atom = B::singleAtom(operand); atom && atom->kind == kind)
      llvm::append_range(flat, atom->args);
    else
      flat.push_back(operand);
  }
  std::vector<TDim> kept;
  for (const TDim &candidate : flat) {
    bool dominated = false;
    for (auto it = kept.begin(); it != kept.end();) {
      std::optional<int64_t> difference = (candidate - *it).getConstant();
      if (!difference) {
        ++it;
        continue;
      }
      // The candidate loses (or ties) against a kept operand: drop it.
      if (isMin ? *difference >= 0 : *difference <= 0) {
        dominated = true;
        break;
      }
      it = kept.erase(it); // the candidate wins against this one
    }
    if (!dominated)
      kept.push_back(candidate);
  }
  if (kept.size() == 1)
    return kept.front();
  llvm::sort(kept);
  Atom atom{kind, "", std::move(kept), 1};
  return B::fromAtom(std::move(atom));
}

TDim TDim::min(llvm::ArrayRef<TDim> operands) {
  return minOrMax(operands, /*isMin=*/true);
}

TDim TDim::max(llvm::ArrayRef<TDim> operands) {
  return minOrMax(operands, /*isMin=*/false);
}

std::optional<TDim> TDim::broadcast(const TDim &lhs, const TDim &rhs) {
  return broadcast({lhs, rhs});
}

std::optional<TDim> TDim::broadcast(llvm::ArrayRef<TDim> operands) {
  std::vector<TDim> kept;
  std::optional<int64_t> constant;
  auto add = [&](const TDim &operand) {
    if (std::optional<int64_t> value = operand.getConstant()) {
      if (*value == 1)
        return true;
      if (constant && *constant != *value)
        return false;
      constant = value;
    }
    kept.push_back(operand);
    return true;
  };
  for (const TDim &operand : operands) {
    if (const Atom *atom = B::singleAtom(operand);
        atom && atom->kind == AtomKind::Broadcast) {
      for (const TDim &arg : atom->args)
        if (!add(arg))
          return std::nullopt;
    } else if (!add(operand)) {
      return std::nullopt;
    }
  }
  // A constant other than 1 decides the broadcast: the symbolic operands
  // must equal it or be 1.
  if (constant)
    return TDim(*constant);
  if (kept.empty())
    return TDim(1);
  llvm::sort(kept);
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  if (kept.size() == 1)
    return kept.front();
  Atom atom{AtomKind::Broadcast, "", std::move(kept), 1};
  return B::fromAtom(std::move(atom));
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

bool TDim::isConstant() const {
  return poly->terms.empty() ||
         (poly->terms.size() == 1 && poly->terms[0].atoms.empty());
}

std::optional<int64_t> TDim::getConstant() const {
  if (poly->terms.empty())
    return 0;
  if (poly->terms.size() == 1 && poly->terms[0].atoms.empty())
    return poly->terms[0].coefficient;
  return std::nullopt;
}

std::optional<std::string> TDim::getSymbolName() const {
  const Atom *atom = B::singleAtom(*this);
  if (!atom || atom->kind != AtomKind::Symbol)
    return std::nullopt;
  return atom->name;
}

void TDim::collectSymbols(std::set<std::string> &names) const {
  for (const Term &term : poly->terms)
    for (const AtomPtr &atom : term.atoms) {
      if (atom->kind == AtomKind::Symbol)
        names.insert(atom->name);
      for (const TDim &arg : atom->args)
        arg.collectSymbols(names);
    }
}

static std::optional<int64_t> evalAtom(const Atom &atom,
                                       const SymbolValues &values) {
  switch (atom.kind) {
  case AtomKind::Symbol: {
    auto it = values.find(atom.name);
    if (it == values.end())
      return std::nullopt;
    return it->second;
  }
  case AtomKind::Div: {
    std::optional<int64_t> numerator = atom.args[0].eval(values);
    if (!numerator)
      return std::nullopt;
    return floorDivide(*numerator, atom.divisor);
  }
  case AtomKind::Min:
  case AtomKind::Max: {
    std::optional<int64_t> result;
    for (const TDim &arg : atom.args) {
      std::optional<int64_t> value = arg.eval(values);
      if (!value)
        return std::nullopt;
      if (!result)
        result = value;
      else
        result = atom.kind == AtomKind::Min ? std::min(*result, *value)
                                            : std::max(*result, *value);
    }
    return result;
  }
  case AtomKind::Broadcast: {
    int64_t result = 1;
    for (const TDim &arg : atom.args) {
      std::optional<int64_t> value = arg.eval(values);
      if (!value)
        return std::nullopt;
      if (*value == 1)
        continue;
      if (result != 1 && result != *value)
        return std::nullopt;
      result = *value;
    }
    return result;
  }
  }
  llvm_unreachable("unknown atom kind");
}

std::vector<TDim::TermView> TDim::getTerms() const {
  std::vector<TermView> terms;
  for (const Term &term : poly->terms) {
    TermView view{term.coefficient, {}};
    for (const AtomPtr &atom : term.atoms) {
      AtomView atomView{atom->kind, atom->name, atom->args, atom->divisor};
      view.atoms.push_back(atomView);
    }
    terms.push_back(std::move(view));
  }
  return terms;
}

std::optional<int64_t> TDim::eval(const SymbolValues &values) const {
  int64_t sum = 0;
  for (const Term &term : poly->terms) {
    int64_t product = term.coefficient;
    for (const AtomPtr &atom : term.atoms) {
      std::optional<int64_t> value = evalAtom(*atom, values);
      if (!value)
        return std::nullopt;
      // A value beyond int64 is no value: the caller reports it rather
      // than compute with a wrapped one.
      if (llvm::MulOverflow(product, *value, product))
        return std::nullopt;
    }
    if (llvm::AddOverflow(sum, product, sum))
      return std::nullopt;
  }
  return sum;
}

/// Rebuilds `dim` with each atom replaced by `rewrite(atom)`.
template <typename Fn> static TDim mapAtoms(const TDim &dim, Fn rewrite) {
  TDim result;
  for (const Term &term : B::terms(dim)) {
    TDim product(term.coefficient);
    for (const AtomPtr &atom : term.atoms)
      product = product * rewrite(*atom);
    result = result + product;
  }
  return result;
}

/// An atom with its operands rewritten by `rewrite`, re-simplified.
template <typename Fn> static TDim rebuildAtom(const Atom &atom, Fn rewrite) {
  std::vector<TDim> args;
  for (const TDim &arg : atom.args)
    args.push_back(rewrite(arg));
  switch (atom.kind) {
  case AtomKind::Symbol:
    return TDim::symbol(atom.name);
  case AtomKind::Div:
    return args[0].floorDiv(atom.divisor);
  case AtomKind::Min:
    return TDim::min(args);
  case AtomKind::Max:
    return TDim::max(args);
  case AtomKind::Broadcast: {
    if (std::optional<TDim> result = TDim::broadcast(args))
      return *result;
    // Substitution made the broadcast invalid: keep it, eval will fail.
    Atom copy{AtomKind::Broadcast, "", std::move(args), 1};
    return B::fromAtom(std::move(copy));
  }
  }
  llvm_unreachable("unknown atom kind");
}

TDim TDim::substitute(llvm::StringRef symbol, const TDim &replacement) const {
  return mapAtoms(*this, [&](const Atom &atom) -> TDim {
    if (atom.kind == AtomKind::Symbol)
      return atom.name == symbol ? replacement : TDim::symbol(atom.name);
    return rebuildAtom(atom, [&](const TDim &arg) {
      return arg.substitute(symbol, replacement);
    });
  });
}

TDim TDim::substitute(const SymbolValues &values) const {
  return mapAtoms(*this, [&](const Atom &atom) -> TDim {
    if (atom.kind == AtomKind::Symbol) {
      auto it = values.find(atom.name);
      return it == values.end() ? TDim::symbol(atom.name) : TDim(it->second);
    }
    return rebuildAtom(atom,
                       [&](const TDim &arg) { return arg.substitute(values); });
  });
}

TDim TDim::substitute(const SymbolDims &dims) const {
  return mapAtoms(*this, [&](const Atom &atom) -> TDim {
    if (atom.kind == AtomKind::Symbol) {
      auto it = dims.find(atom.name);
      return it == dims.end() ? TDim::symbol(atom.name) : it->second;
    }
    return rebuildAtom(atom,
                       [&](const TDim &arg) { return arg.substitute(dims); });
  });
}

int TDim::compare(const TDim &other) const {
  if (poly == other.poly)
    return 0;
  const std::vector<Term> &a = poly->terms, &b = other.poly->terms;
  if (a.size() != b.size())
    return a.size() < b.size() ? -1 : 1;
  for (auto [x, y] : llvm::zip(a, b)) {
    if (int c = compareAtomLists(x.atoms, y.atoms))
      return c;
    if (x.coefficient != y.coefficient)
      return x.coefficient < y.coefficient ? -1 : 1;
  }
  return 0;
}

static llvm::hash_code hashAtom(const Atom &atom) {
  llvm::hash_code args =
      llvm::hash_combine_range(atom.args.begin(), atom.args.end());
  return llvm::hash_combine(atom.kind, atom.name, atom.divisor, args);
}

llvm::hash_code mlir::tract::hash_value(const TDim &dim) {
  // Structural, over the canonical terms: equal dims hash equally.
  llvm::hash_code hash = llvm::hash_value(B::terms(dim).size());
  for (const Term &term : B::terms(dim)) {
    hash = llvm::hash_combine(hash, term.coefficient);
    for (const AtomPtr &atom : term.atoms)
      hash = llvm::hash_combine(hash, hashAtom(*atom));
  }
  return hash;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

/// `soleFactor`: the atom is its term's only factor, with coefficient 1;
/// `wholeExpression`: and that term is the whole expression.
static std::string printAtom(const Atom &atom, bool soleFactor,
                             bool wholeExpression) {
  switch (atom.kind) {
  case AtomKind::Symbol:
    return atom.name;
  case AtomKind::Div: {
    const TDim &numerator = atom.args[0];
    std::string inner = numerator.toString();
    bool simple = numerator.getSymbolName().has_value();
    std::string text = (simple ? inner : "(" + inner + ")") + "/" +
                       std::to_string(atom.divisor);
    // `2*(S/4)` is not `(2*S)/4`: keep divisions apart inside products.
    return soleFactor ? text : "(" + text + ")";
  }
  case AtomKind::Min:
  case AtomKind::Max: {
    std::string text = atom.kind == AtomKind::Min ? "min(" : "max(";
    llvm::ListSeparator separator(",");
    for (const TDim &arg : atom.args)
      text += llvm::StringRef(separator).str() + arg.toString();
    return text + ")";
  }
  case AtomKind::Broadcast: {
    std::string text;
    llvm::ListSeparator separator("#");
    for (const TDim &arg : atom.args) {
      std::string inner = arg.toString();
      bool needsParens = B::terms(arg).size() > 1;
      text += llvm::StringRef(separator).str() +
              (needsParens ? "(" + inner + ")" : inner);
    }
    // `#` binds loosest of all operators.
    return wholeExpression ? text : "(" + text + ")";
  }
  }
  llvm_unreachable("unknown atom kind");
}

std::string TDim::toString() const {
  const std::vector<Term> &terms = poly->terms;
  if (terms.empty())
    return "0";
  // Canonically a division's numerator has its constant in [0, q), so
  // `(S-3)/4` is held as `(S+1)/4-1`; print it the way people write it by
  // folding the constant term back into the first division.
  std::optional<int64_t> constant;
  if (terms.back().atoms.empty())
    constant = terms.back().coefficient;
  const Term *foldInto = nullptr;
  if (constant)
    for (const Term &term : terms)
      if (term.coefficient == 1 && term.atoms.size() == 1 &&
          term.atoms[0]->kind == AtomKind::Div) {
        foldInto = &term;
        break;
      }
  std::string text;
  for (const Term &term : terms) {
    std::string termText;
    if (foldInto && term.atoms.empty())
      continue;
    if (&term == foldInto) {
      const Atom &div = *term.atoms[0];
      Atom folded{AtomKind::Div,
                  "",
                  {div.args[0] + TDim(wrapMul(*constant, div.divisor))},
                  div.divisor};
      termText = printAtom(folded, /*soleFactor=*/true,
                           /*wholeExpression=*/terms.size() == 2);
    } else if (term.atoms.empty()) {
      termText = std::to_string(term.coefficient);
    } else {
      bool soleFactor = term.atoms.size() == 1 && term.coefficient == 1;
      bool wholeExpression = soleFactor && terms.size() == 1;
      llvm::ListSeparator separator("*");
      if (term.coefficient == -1)
        termText = "-";
      else if (term.coefficient != 1)
        termText = std::to_string(term.coefficient) + "*";
      for (const AtomPtr &atom : term.atoms)
        termText += llvm::StringRef(separator).str() +
                    printAtom(*atom, soleFactor, wholeExpression);
    }
    // After another term, `-` is a subtraction, and 9223372036854775808
    // has no int64_t: the most negative coefficient keeps its sign inside
    // brackets.
    if (!text.empty() &&
        term.coefficient == std::numeric_limits<int64_t>::min())
      termText = "(" + termText + ")";
    if (!text.empty() && termText[0] != '-')
      text += "+";
    text += termText;
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

class DimParser {
public:
  explicit DimParser(llvm::StringRef text) : text(text) {}

  std::optional<TDim> parseAll() {
    std::optional<TDim> result = parseBroadcast();
    skipSpace();
    if (result && pos != text.size())
      return fail("unexpected '" + text.substr(pos, 1).str() + "'");
    if (result && !bounded(*result))
      return std::nullopt;
    return result;
  }

  std::string error;

private:
  std::optional<TDim> fail(const std::string &message) {
    if (error.empty())
      error = message + " at column " + std::to_string(pos + 1) + " in '" +
              text.str() + "'";
    return std::nullopt;
  }

  void skipSpace() {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  }

  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  unsigned depth = 0;
  static constexpr unsigned kMaxDepth = 256;

  /// Products of sums expand: a few hundred bytes of text can ask for
  /// billions of terms. What a model's dims need stays far below this.
  static constexpr size_t kMaxText = 2048;
  /// TDim arithmetic wraps at 64 bits: a dim read from text keeps its
  /// constants below 2^31, so that no product or sum of them wraps. (A
  /// model's dims are far smaller.)
  static constexpr int64_t kMaxConstant = kDimCeiling - 1;
  bool bounded(const TDim &dim) {
    std::string printed = dim.toString(); // linear in its (bounded) size
    if (printed.size() > kMaxText) {
      fail("the dim expands beyond " + std::to_string(kMaxText) +
           " characters");
      return false;
    }
    for (size_t i = 0; i < printed.size();) {
      if (!llvm::isDigit(printed[i])) {
        ++i;
        continue;
      }
      size_t start = i;
      while (i < printed.size() && llvm::isDigit(printed[i]))
        ++i;
      uint64_t value;
      if (llvm::StringRef(printed)
              .substr(start, i - start)
              .getAsInteger(10, value) ||
          value > uint64_t(kMaxConstant)) {
        fail("the dim has a constant beyond 2^31 - 1 (" +
             printed.substr(start, i - start) + ")");
        return false;
      }
    }
    return true;
  }

  std::optional<TDim> parseBroadcast() {
    std::optional<TDim> first = parseSum();
    if (!first || !consume('#'))
      return first;
    std::vector<TDim> operands = {*first};
    do {
      std::optional<TDim> next = parseSum();
      if (!next)
        return std::nullopt;
      operands.push_back(std::move(*next));
    } while (consume('#'));
    std::optional<TDim> combined = TDim::broadcast(operands);
    if (!combined)
      return fail("dims " + llvm::join(llvm::map_range(operands,
                                                       [](const TDim &dim) {
                                                         return dim.toString();
                                                       }),
                                       ", ") +
                  " do not broadcast");
    return combined;
  }

  std::optional<TDim> parseSum() {
    std::optional<TDim> result = parseProduct();
    while (result) {
      bool plus = consume('+');
      if (!plus && !consume('-'))
        break;
      std::optional<TDim> rhs = parseProduct();
      if (!rhs)
        return std::nullopt;
      if (plus)
        *result += *rhs;
      else
        *result -= *rhs;
      if (!bounded(*result))
        return std::nullopt;
    }
    return result;
  }

  std::optional<TDim> parseProduct() {
    std::optional<TDim> result = parseUnary();
    while (result) {
      if (consume('*')) {
        std::optional<TDim> rhs = parseUnary();
        if (!rhs)
          return std::nullopt;
        *result *= *rhs;
        if (!bounded(*result))
          return std::nullopt;
      } else if (consume('/')) {
        size_t at = pos;
        std::optional<TDim> rhs = parseUnary();
        if (!rhs)
          return std::nullopt;
        std::optional<int64_t> divisor = rhs->getConstant();
        if (!divisor || *divisor <= 0) {
          pos = at;
          return fail("expected a positive constant divisor");
        }
        result = result->floorDiv(*divisor);
        if (!bounded(*result))
          return std::nullopt;
      } else {
        break;
      }
    }
    return result;
  }

  std::optional<TDim> parseUnary() {
    // Brackets, calls and signs all recurse through here.
    if (depth == kMaxDepth)
      return fail("the dim nests deeper than " + std::to_string(kMaxDepth) +
                  " levels");
    ++depth;
    struct Leave {
      unsigned &depth;
      ~Leave() { --depth; }
    } leave{depth};
    if (consume('-')) {
      std::optional<TDim> operand = parseUnary();
      return operand ? std::optional<TDim>(-*operand) : std::nullopt;
    }
    if (consume('+'))
      return parseUnary();
    return parsePrimary();
  }

  std::optional<TDim> parsePrimary() {
    skipSpace();
    if (pos >= text.size())
      return fail("expected a dim");
    char c = text[pos];
    if (c == '(') {
      ++pos;
      std::optional<TDim> inner = parseBroadcast();
      if (!inner)
        return std::nullopt;
      if (!consume(')'))
        return fail("expected ')'");
      return inner;
    }
    if (llvm::isDigit(c)) {
      size_t start = pos;
      while (pos < text.size() && llvm::isDigit(text[pos]))
        ++pos;
      int64_t value;
      if (text.substr(start, pos - start).getAsInteger(10, value)) {
        pos = start;
        return fail("integer out of range");
      }
      return TDim(value);
    }
    if (llvm::isAlpha(c) || c == '_') {
      size_t start = pos;
      while (pos < text.size() &&
             (llvm::isAlnum(text[pos]) || text[pos] == '_'))
        ++pos;
      llvm::StringRef name = text.substr(start, pos - start);
      if ((name == "min" || name == "max") && consume('('))
        return parseCall(name == "min");
      return TDim::symbol(name);
    }
    return fail("expected a dim");
  }

  std::optional<TDim> parseCall(bool isMin) {
    std::vector<TDim> operands;
    do {
      std::optional<TDim> operand = parseBroadcast();
      if (!operand)
        return std::nullopt;
      operands.push_back(*operand);
    } while (consume(','));
    if (!consume(')'))
      return fail("expected ',' or ')'");
    return isMin ? TDim::min(operands) : TDim::max(operands);
  }

  llvm::StringRef text;
  size_t pos = 0;
};

} // namespace

std::optional<TDim> TDim::parse(llvm::StringRef text, std::string *error) {
  DimParser parser(text);
  std::optional<TDim> result = parser.parseAll();
  if (!result && error)
    *error = parser.error;
  return result;
}

//===----------------------------------------------------------------------===//
// Assertions, scenarios and proofs
//===----------------------------------------------------------------------===//

namespace {

/// Saturating interval arithmetic: values beyond +-2^62 are unbounded.
using Wide = __int128;
constexpr Wide kInfinity = Wide(1) << 62;

Wide saturate(Wide v) {
  return v >= kInfinity ? kInfinity : (v <= -kInfinity ? -kInfinity : v);
}
Wide satAdd(Wide a, Wide b) {
  if (a == kInfinity || b == kInfinity)
    return (a == -kInfinity || b == -kInfinity) ? 0 : kInfinity;
  if (a == -kInfinity || b == -kInfinity)
    return -kInfinity;
  return saturate(a + b);
}
Wide satMul(Wide a, Wide b) {
  if (a == 0 || b == 0)
    return 0;
  return saturate(a * b); // |a|,|b| <= 2^62: the product fits in 125 bits
}

struct Interval {
  Wide lo = -kInfinity, hi = kInfinity;
};

Interval add(Interval a, Interval b) {
  // An unbounded side stays unbounded whatever the other side is.
  Wide lo = (a.lo == -kInfinity || b.lo == -kInfinity) ? -kInfinity
                                                       : satAdd(a.lo, b.lo);
  Wide hi =
      (a.hi == kInfinity || b.hi == kInfinity) ? kInfinity : satAdd(a.hi, b.hi);
  return {lo, hi};
}

Interval mul(Interval a, Interval b) {
  Wide corners[] = {satMul(a.lo, b.lo), satMul(a.lo, b.hi), satMul(a.hi, b.lo),
                    satMul(a.hi, b.hi)};
  return {*std::min_element(std::begin(corners), std::end(corners)),
          *std::max_element(std::begin(corners), std::end(corners))};
}

Wide floorDivWide(Wide a, Wide q) {
  if (a == kInfinity || a == -kInfinity)
    return a;
  Wide d = a / q;
  return (a % q != 0 && a < 0) ? d - 1 : d;
}

/// Bounds of each symbol from constraints of the form `c*S + k >= 0`.
using SymbolIntervals = std::map<std::string, Interval, std::less<>>;

Interval boundsOf(const TDim &dim, const SymbolIntervals &symbols);

Interval boundsOfAtom(const Atom &atom, const SymbolIntervals &symbols) {
  switch (atom.kind) {
  case AtomKind::Symbol: {
    auto it = symbols.find(atom.name);
    return it == symbols.end() ? Interval{0, kInfinity} : it->second;
  }
  case AtomKind::Div: {
    Interval inner = boundsOf(atom.args[0], symbols);
    return {floorDivWide(inner.lo, atom.divisor),
            floorDivWide(inner.hi, atom.divisor)};
  }
  case AtomKind::Min:
  case AtomKind::Max:
  case AtomKind::Broadcast: {
    std::vector<Interval> parts;
    for (const TDim &arg : atom.args)
      parts.push_back(boundsOf(arg, symbols));
    Interval result = parts.front();
    for (const Interval &part : llvm::drop_begin(parts)) {
      if (atom.kind == AtomKind::Min) {
        result = {std::min(result.lo, part.lo), std::min(result.hi, part.hi)};
      } else if (atom.kind == AtomKind::Max) {
        result = {std::max(result.lo, part.lo), std::max(result.hi, part.hi)};
      } else { // a broadcast is one of its operands
        result = {std::min(result.lo, part.lo), std::max(result.hi, part.hi)};
      }
    }
    return result;
  }
  }
  llvm_unreachable("unknown atom kind");
}

Interval boundsOf(const TDim &dim, const SymbolIntervals &symbols) {
  Interval sum{0, 0};
  for (const Term &term : B::terms(dim)) {
    Interval product{term.coefficient, term.coefficient};
    for (const AtomPtr &atom : term.atoms)
      product = mul(product, boundsOfAtom(*atom, symbols));
    sum = add(sum, product);
  }
  return sum;
}

/// Bounds of each symbol from the linear constraints `sum(c_i*S_i) + k >= 0`:
/// each one bounds every S_i by the extremes of the other terms. A few rounds
/// let bounds flow between constraints.
SymbolIntervals symbolIntervals(llvm::ArrayRef<TDim> constraints) {
  SymbolIntervals intervals;
  auto intervalOf = [&](const std::string &name) -> Interval & {
    return intervals.try_emplace(name, Interval{0, kInfinity}).first->second;
  };
  for (int round = 0; round < 3; ++round) {
    for (const TDim &constraint : constraints) {
      const std::vector<Term> &terms = B::terms(constraint);
      bool linear = llvm::all_of(terms, [](const Term &term) {
        return term.atoms.empty() || (term.atoms.size() == 1 &&
                                      term.atoms[0]->kind == AtomKind::Symbol);
      });
      if (!linear)
        continue;
      for (const Term &term : terms) {
        if (term.atoms.empty())
          continue;
        // c*S >= -(rest), so c*S >= -hi(rest).
        Interval rest{0, 0};
        for (const Term &other : terms) {
          if (&other == &term)
            continue;
          Interval part{other.coefficient, other.coefficient};
          if (!other.atoms.empty())
            part = mul(part, intervalOf(other.atoms[0]->name));
          rest = add(rest, part);
        }
        if (rest.hi == kInfinity)
          continue;
        Interval &interval = intervalOf(term.atoms[0]->name);
        int64_t c = term.coefficient;
        if (c > 0) // S >= ceil(-hi / c)
          interval.lo = std::max<Wide>(interval.lo, -floorDivWide(rest.hi, c));
        else // S <= floor(hi / -c)
          interval.hi = std::min<Wide>(interval.hi, floorDivWide(rest.hi, -c));
      }
    }
  }
  return intervals;
}

/// Parses `A op B` into constraints `expr >= 0`.
bool parseRelation(llvm::StringRef text, std::vector<TDim> &out,
                   std::string *error) {
  std::optional<DimRelation> relation = DimRelation::parse(text, error);
  if (!relation)
    return false;
  for (TDim &constraint : relation->constraints())
    out.push_back(std::move(constraint));
  return true;
}

} // namespace

std::optional<DimRelation> DimRelation::parse(llvm::StringRef text,
                                              std::string *error) {
  using K = Kind;
  // Two-character operators first, so that `>=` is not read as `>`.
  static const std::pair<llvm::StringRef, K> kOperators[] = {
      {">=", K::GreaterOrEqual}, {"<=", K::LessOrEqual}, {"==", K::Equal},
      {">", K::Greater},         {"<", K::Less},         {"=", K::Equal}};
  for (auto [op, kind] : kOperators) {
    size_t at = text.find(op);
    if (at == llvm::StringRef::npos)
      continue;
    std::optional<TDim> lhs = TDim::parse(text.take_front(at).trim(), error);
    if (!lhs)
      return std::nullopt;
    std::optional<TDim> rhs =
        TDim::parse(text.drop_front(at + op.size()).trim(), error);
    if (!rhs)
      return std::nullopt;
    return DimRelation{*lhs, kind, *rhs};
  }
  if (error)
    *error = "expected a relation (>=, >, <=, <, ==) in '" + text.str() + "'";
  return std::nullopt;
}

std::vector<TDim> DimRelation::constraints() const {
  TDim difference = lhs - rhs;
  switch (kind) {
  case Kind::GreaterOrEqual:
    return {difference};
  case Kind::LessOrEqual:
    return {-difference};
  case Kind::Equal:
    return {difference, -difference};
  case Kind::Greater:
    return {difference - TDim(1)};
  case Kind::Less:
    return {-difference - TDim(1)};
  }
  llvm_unreachable("unknown relation");
}

DimRelation DimRelation::substitute(const SymbolDims &dims) const {
  return {lhs.substitute(dims), kind, rhs.substitute(dims)};
}

std::optional<bool> DimRelation::evaluate() const {
  bool holds = true;
  for (const TDim &constraint : constraints()) {
    std::optional<int64_t> value = constraint.getConstant();
    if (!value)
      return std::nullopt;
    holds = holds && *value >= 0;
  }
  return holds;
}

std::string DimRelation::toString() const {
  static const char *const kSpelling[] = {">=", ">", "<=", "<", "=="};
  return lhs.toString() + " " + kSpelling[static_cast<int>(kind)] + " " +
         rhs.toString();
}

bool SymbolScope::addAssertion(llvm::StringRef text, std::string *error) {
  if (!parseRelation(text, global, error))
    return false;
  assertionTexts.push_back(text.trim().str());
  return true;
}

bool SymbolScope::parseAssertion(llvm::StringRef text, std::vector<TDim> &out,
                                 std::string *error) {
  return parseRelation(text, out, error);
}

bool SymbolScope::addScenarioAssertion(llvm::StringRef text,
                                       std::string *error) {
  auto [name, rule] = text.split(':');
  name = name.trim();
  if (rule.empty() || name.empty() || !llvm::all_of(name, [](char c) {
        return llvm::isAlnum(c) || c == '_';
      })) {
    if (error)
      *error = "expected 'scenario: relation' in '" + text.str() + "'";
    return false;
  }
  std::vector<TDim> parsed;
  if (!parseRelation(rule, parsed, error))
    return false;
  for (TDim &constraint : parsed)
    scenarioConstraints.emplace_back(name.str(), std::move(constraint));
  scenarioTexts.push_back(name.str() + ": " + rule.trim().str());
  return true;
}

std::optional<std::string>
SymbolScope::findViolatedAssertion(const SymbolValues &values) const {
  for (const std::string &text : assertionTexts) {
    std::vector<TDim> parsed;
    if (!parseRelation(text, parsed, nullptr))
      continue;
    for (const TDim &constraint : parsed) {
      std::optional<int64_t> value = constraint.eval(values);
      if (value && *value < 0)
        return text;
    }
  }
  return std::nullopt;
}

std::vector<std::string> SymbolScope::getScenarios() const {
  std::vector<std::string> names;
  for (const auto &entry : scenarioConstraints)
    if (!llvm::is_contained(names, entry.first))
      names.push_back(entry.first);
  return names;
}

std::vector<TDim> SymbolScope::constraints(llvm::StringRef scenario) const {
  std::vector<TDim> all = global;
  for (const auto &[name, constraint] : scenarioConstraints)
    if (!scenario.empty() && name == scenario)
      all.push_back(constraint);
  return all;
}

DimBounds SymbolScope::bounds(const TDim &dim, llvm::StringRef scenario) const {
  std::vector<TDim> all = constraints(scenario);
  SymbolIntervals symbols = symbolIntervals(all);
  Interval best = boundsOf(dim, symbols);
  // With c >= 0 known: dim = c + (dim - c) >= lo(dim - c), and
  // dim = (dim + c) - c <= hi(dim + c).
  for (const TDim &constraint : all) {
    best.lo = std::max(best.lo, boundsOf(dim - constraint, symbols).lo);
    best.hi = std::min(best.hi, boundsOf(dim + constraint, symbols).hi);
  }
  DimBounds result;
  if (best.lo > -kInfinity)
    result.lower = static_cast<int64_t>(best.lo);
  if (best.hi < kInfinity)
    result.upper = static_cast<int64_t>(best.hi);
  return result;
}

bool SymbolScope::proveNonNegative(const TDim &dim,
                                   llvm::StringRef scenario) const {
  if (std::optional<int64_t> value = dim.getConstant())
    return *value >= 0;
  std::optional<int64_t> lower = bounds(dim, scenario).lower;
  return lower && *lower >= 0;
}

bool SymbolScope::provePositive(const TDim &dim,
                                llvm::StringRef scenario) const {
  return proveNonNegative(dim - TDim(1), scenario);
}

bool SymbolScope::proveGreaterOrEqual(const TDim &lhs, const TDim &rhs,
                                      llvm::StringRef scenario) const {
  return proveNonNegative(lhs - rhs, scenario);
}

TDim SymbolScope::simplify(const TDim &dim, llvm::StringRef scenario) const {
  return mapAtoms(dim, [&](const Atom &atom) -> TDim {
    TDim rebuilt = rebuildAtom(
        atom, [&](const TDim &arg) { return simplify(arg, scenario); });
    const Atom *inner = B::singleAtom(rebuilt);
    if (!inner ||
        (inner->kind != AtomKind::Min && inner->kind != AtomKind::Max))
      return rebuilt;
    // Keep the operands that no other operand provably beats.
    bool isMin = inner->kind == AtomKind::Min;
    std::vector<TDim> kept;
    for (const TDim &candidate : inner->args) {
      bool beaten = llvm::any_of(kept, [&](const TDim &other) {
        return isMin ? proveGreaterOrEqual(candidate, other, scenario)
                     : proveGreaterOrEqual(other, candidate, scenario);
      });
      if (beaten)
        continue;
      llvm::erase_if(kept, [&](const TDim &other) {
        return isMin ? proveGreaterOrEqual(other, candidate, scenario)
                     : proveGreaterOrEqual(candidate, other, scenario);
      });
      kept.push_back(candidate);
    }
    return isMin ? TDim::min(kept) : TDim::max(kept);
  });
}

std::optional<TDim> mlir::tract::floorScaled(const TDim &dim, double factor) {
  if (!(factor >= 0)) // NaN too
    return std::nullopt;
  if (std::optional<int64_t> x = dim.getConstant()) {
    double scaled = std::floor(static_cast<double>(*x) * factor);
    if (!(scaled >= 0 && scaled < static_cast<double>(kDimCeiling)))
      return std::nullopt;
    return TDim(static_cast<int64_t>(scaled));
  }
  for (int64_t denominator = 1; denominator <= (1 << 16); denominator *= 2) {
    double numerator = factor * static_cast<double>(denominator);
    if (numerator == std::floor(numerator) && std::fabs(numerator) < 1e9) {
      TDim scaled = dim * TDim(static_cast<int64_t>(numerator));
      return denominator == 1 ? scaled : scaled.floorDiv(denominator);
    }
  }
  return std::nullopt;
}
