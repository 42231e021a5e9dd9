#include "dialects/tract/TractAttrs.h"

#include "dialects/tract/TractDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tract;

namespace mlir::tract::detail {

/// The storage of DimsAttr and ShapeAttr: a list of TDims it owns. A TDim
/// holds a reference-counted expression; what an ArrayRefParameter copies
/// into the context's allocator is never destroyed, while this storage's
/// destructor runs when the context goes.
struct TDimListStorage : public AttributeStorage {
  using KeyTy = ArrayRef<TDim>;

  explicit TDimListStorage(ArrayRef<TDim> dims)
      : dims(dims.begin(), dims.end()) {}

  bool operator==(const KeyTy &key) const {
    return ArrayRef<TDim>(dims) == key;
  }
  static llvm::hash_code hashKey(const KeyTy &key) {
    return llvm::hash_combine_range(key.begin(), key.end());
  }
  static TDimListStorage *construct(AttributeStorageAllocator &allocator,
                                    const KeyTy &key) {
    return new (allocator.allocate<TDimListStorage>()) TDimListStorage(key);
  }

  SmallVector<TDim> dims;
};

} // namespace mlir::tract::detail

#define GET_ATTRDEF_CLASSES
#include "dialects/tract/TractAttrs.cpp.inc"

ArrayRef<TDim> DimsAttr::getDims() const { return getImpl()->dims; }
ArrayRef<TDim> ShapeAttr::getDims() const { return getImpl()->dims; }

void TractDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tract/TractAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DimsAttr
//===----------------------------------------------------------------------===//

namespace {

/// Parses a TDim from MLIR tokens with tract's grammar (`S+P`, `(S-3)/4`,
/// `2*S`, `min(S,8)`); a quoted string holds any TDim text, broadcasts
/// included.
class DimTokenParser {
public:
  explicit DimTokenParser(AsmParser &parser) : parser(parser) {}

  FailureOr<TDim> parseSum() {
    FailureOr<TDim> result = parseProduct();
    while (succeeded(result)) {
      bool plus = succeeded(parser.parseOptionalPlus());
      if (!plus && failed(parser.parseOptionalMinus()))
        break;
      FailureOr<TDim> rhs = parseProduct();
      if (failed(rhs))
        return failure();
      result = plus ? *result + *rhs : *result - *rhs;
    }
    return result;
  }

private:
  FailureOr<TDim> parseProduct() {
    FailureOr<TDim> result = parseUnary();
    while (succeeded(result)) {
      if (succeeded(parser.parseOptionalStar())) {
        FailureOr<TDim> rhs = parseUnary();
        if (failed(rhs))
          return failure();
        result = *result * *rhs;
      } else if (succeeded(parser.parseOptionalSlash())) {
        SMLoc at = parser.getCurrentLocation();
        int64_t divisor;
        if (parser.parseInteger(divisor))
          return failure();
        if (divisor <= 0)
          return parser.emitError(at, "expected a positive divisor");
        result = result->floorDiv(divisor);
      } else {
        break;
      }
    }
    return result;
  }

  FailureOr<TDim> parseUnary() {
    if (succeeded(parser.parseOptionalMinus())) {
      FailureOr<TDim> operand = parseUnary();
      if (failed(operand))
        return failure();
      return -*operand;
    }
    return parsePrimary();
  }

  FailureOr<TDim> parsePrimary() {
    SMLoc at = parser.getCurrentLocation();
    if (succeeded(parser.parseOptionalLParen())) {
      FailureOr<TDim> inner = parseSum();
      if (failed(inner) || parser.parseRParen())
        return failure();
      return inner;
    }
    int64_t value;
    OptionalParseResult integer = parser.parseOptionalInteger(value);
    if (integer.has_value()) {
      if (failed(*integer))
        return failure();
      return TDim(value);
    }
    std::string text;
    if (succeeded(parser.parseOptionalString(&text))) {
      std::string error;
      std::optional<TDim> dim = TDim::parse(text, &error);
      if (!dim)
        return parser.emitError(at, error);
      return *dim;
    }
    StringRef name;
    if (failed(parser.parseOptionalKeyword(&name)))
      return parser.emitError(at, "expected a symbolic dim");
    if ((name == "min" || name == "max") &&
        succeeded(parser.parseOptionalLParen())) {
      SmallVector<TDim> operands;
      do {
        FailureOr<TDim> operand = parseSum();
        if (failed(operand))
          return failure();
        operands.push_back(*operand);
      } while (succeeded(parser.parseOptionalComma()));
      if (parser.parseRParen())
        return failure();
      return name == "min" ? TDim::min(operands) : TDim::max(operands);
    }
    if (!llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; }))
      return parser.emitError(at, "invalid symbol name '") << name << "'";
    return TDim::symbol(name);
  }

  AsmParser &parser;
};

} // namespace

namespace {

/// Parses `<[d0, d1, …]>`.
FailureOr<SmallVector<TDim>> parseDimList(AsmParser &parser) {
  SmallVector<TDim> dims;
  DimTokenParser dimParser(parser);
  auto parseOne = [&]() -> ParseResult {
    FailureOr<TDim> dim = dimParser.parseSum();
    if (failed(dim))
      return failure();
    dims.push_back(*dim);
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseOne) ||
      parser.parseGreater())
    return failure();
  return dims;
}

/// Prints a dim so that DimTokenParser reads it back: broadcasts quoted.
void printDim(AsmPrinter &printer, const TDim &dim) {
  std::string text = dim.toString();
  if (llvm::is_contained(text, '#'))
    printer << '"' << text << '"';
  else
    printer << text;
}

void printDimList(AsmPrinter &printer, ArrayRef<TDim> dims) {
  printer << "<[";
  llvm::interleaveComma(dims, printer,
                        [&](const TDim &dim) { printDim(printer, dim); });
  printer << "]>";
}

} // namespace

Attribute DimsAttr::parse(AsmParser &parser, Type) {
  FailureOr<SmallVector<TDim>> dims = parseDimList(parser);
  if (failed(dims))
    return {};
  return DimsAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), *dims);
}

void DimsAttr::print(AsmPrinter &printer) const {
  printDimList(printer, getDims());
}

Attribute ShapeAttr::parse(AsmParser &parser, Type) {
  FailureOr<SmallVector<TDim>> dims = parseDimList(parser);
  if (failed(dims))
    return {};
  return ShapeAttr::get(parser.getContext(), *dims);
}

void ShapeAttr::print(AsmPrinter &printer) const {
  printDimList(printer, getDims());
}

Attribute DimAttr::parse(AsmParser &parser, Type) {
  DimTokenParser dimParser(parser);
  if (parser.parseLess())
    return {};
  FailureOr<TDim> dim = dimParser.parseSum();
  if (failed(dim) || parser.parseGreater())
    return {};
  return DimAttr::get(parser.getContext(), *dim);
}

void DimAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printDim(printer, getValue());
  printer << ">";
}

LogicalResult DimsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<TDim> dims) {
  for (const TDim &dim : dims)
    if (std::optional<int64_t> value = dim.getConstant())
      return emitError() << "dim " << *value
                         << " is constant: make it a static dim of the type";
  return success();
}
