//===- NnefAst.h - the syntax tree of an NNEF graph document ----*- C++ -*-===//
//
// What the parser makes of a `graph.nnef` text (NNEF 1.0): the version, the
// extension lines, fragment declarations and definitions, and the graph.
// Every node keeps its source position for error messages.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_NNEF_NNEFAST_H
#define FRONTENDS_NNEF_NNEFAST_H

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tract::nnef {

/// A position in a source text, 1-based.
struct SourcePos {
  unsigned line = 0;
  unsigned column = 0;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// An argument of an invocation: positional (empty name) or `name = value`.
struct Argument {
  std::string name;
  ExprPtr value;
};

struct Expr {
  enum class Kind {
    Integer,       ///< `3`
    Scalar,        ///< `3.0`, `1e-5`
    String,        ///< `'constant'`, `"f32"`
    Logical,       ///< `true`, `false`
    Identifier,    ///< `x`, a tensor name, a parameter or a tract symbol
    Array,         ///< `[a, b]`
    Tuple,         ///< `(a, b)`
    Invocation,    ///< `conv(x, w, stride = [2, 2])`, `external<scalar>(...)`
    Unary,         ///< `-x`, `!x`, `not x`
    Binary,        ///< `a + b`, `a < b`, `a && b`, `a in b`
    Conditional,   ///< `a if c else b`
    Subscript,     ///< `a[i]`, `a[i:j]`
    Comprehension, ///< `[for i in a if c yield e]`
  };
  Kind kind;
  SourcePos pos;
  std::string text;           ///< literal text, identifier, op name, operator
  std::string generic;        ///< Invocation: the `<type>` given, if any
  std::vector<ExprPtr> items; ///< Array/Tuple items; Unary/Binary/Subscript
                              ///< operands; Conditional: value, cond, else
  std::vector<Argument> args; ///< Invocation arguments
  /// Subscript: whether it is a range `a[i:j]` (items[1] or [2] may be null).
  bool range = false;
  /// Comprehension: loop variables and their iterables in items, then the
  /// optional condition (`cond`) and the yielded expression (`yield`).
  std::vector<std::string> loopVars;
  ExprPtr cond, yield;

  Expr(Kind kind, SourcePos pos) : kind(kind), pos(pos) {}
};

/// A type as a fragment declares it.
struct TypeSpec {
  enum class Kind { Name, Tensor, Array, Tuple };
  Kind kind = Kind::Name;
  std::string name; ///< integer, scalar, logical, string or ?; tensor item
  std::vector<TypeSpec> items; ///< Array: the item type; Tuple: the items
};

struct Parameter {
  std::string name;
  TypeSpec type;
  ExprPtr defaultValue;
  SourcePos pos;
};

/// `lvalue = rvalue;` where the lvalue is an identifier, array or tuple of
/// identifiers (an Expr of those kinds).
struct Assignment {
  ExprPtr lhs;
  ExprPtr rhs;
  SourcePos pos;
};

struct Fragment {
  std::string name;
  SourcePos pos;
  bool generic = false;
  std::string genericDefault; ///< `<? = scalar>`
  std::vector<Parameter> params;
  std::vector<Parameter> results;
  /// A compound fragment's body; a declaration has none.
  std::optional<std::vector<Assignment>> body;
};

struct Extension {
  /// The text after `extension` up to the `;`, trimmed:
  /// `tract_registry tract_core`, `tract_symbol S`, `tract_assert S >= 1`.
  std::string text;
  SourcePos pos;
};

struct Document {
  std::string version;
  std::vector<Extension> extensions;
  std::vector<Fragment> fragments;
  std::string graphName;
  std::vector<std::string> inputs, outputs;
  std::vector<Assignment> body;
  SourcePos graphPos;
};

} // namespace mlir::tract::nnef

#endif // FRONTENDS_NNEF_NNEFAST_H
