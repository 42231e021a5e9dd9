//===- EinsumExpr.h - the parts of an einsum expression ---------*- C++ -*-===//
//
// `tract.einsum` names each input's axes with letters (`mk,kn->mn`). Its
// shape inference, its folder, its lowering and its cost read the
// expression the same way: one spec per input, the output letters (when
// the expression has no `->`, the letters seen once, in alphabetical order)
// and one size per letter, broadcast across the inputs that name it.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_EINSUMEXPR_H
#define DIALECTS_TRACT_EINSUMEXPR_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>

namespace mlir::tract {

struct EinsumExpr {
  /// The letters of each input's axes.
  llvm::SmallVector<std::string> inputs;
  /// The letters of the result's axes.
  std::string output;

  /// Splits `expr`; the implicit output is derived here.
  static EinsumExpr parse(llvm::StringRef expr);

  /// Every letter, the output's first, then the summed ones alphabetically:
  /// the loop order of a contraction.
  std::string loopLetters() const;

  /// Whether some letter is summed (absent from the output).
  bool hasSummedAxes() const;

  /// Each letter's size, combined over the inputs' dims by `combine`
  /// (called for a letter's second and later dims; it may fail by
  /// returning false, which stops with that letter in `*conflict`).
  template <typename Dim, typename Shapes, typename Combine>
  bool letterSizes(const Shapes &shapes, Combine combine,
                   std::map<char, Dim> &sizes, char *conflict = nullptr) const {
    for (auto [spec, shape] : llvm::zip(inputs, shapes))
      for (auto [letter, dim] : llvm::zip(spec, shape)) {
        auto [it, inserted] = sizes.try_emplace(letter, dim);
        if (!inserted && !combine(it->second, dim)) {
          if (conflict)
            *conflict = letter;
          return false;
        }
      }
    return true;
  }
};

} // namespace mlir::tract

#endif // DIALECTS_TRACT_EINSUMEXPR_H
