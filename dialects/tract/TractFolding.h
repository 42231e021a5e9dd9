//===- TractFolding.h - constant folding of element-wise ops ----*- C++ -*-===//
//
// Shared by the folders of the tract ops: evaluate element-wise functions on
// constant operands, with numpy broadcasting, under a size budget.
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_TRACTFOLDING_H
#define DIALECTS_TRACT_TRACTFOLDING_H

#include "dialects/tract/TractAttrs.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"

namespace mlir::tract {

/// Constants with more elements than this are not folded (splats always
/// are), so that folding never blows up a model's size.
constexpr int64_t kFoldElementBudget = 1 << 16;

/// `value` with its axes in the order `permutation` (result axis i is
/// source axis permutation[i]), whatever its size: a one-time layout
/// change of weights for the code generator, bytes moved as bytes. Element
/// types of whole bytes only (null otherwise).
DenseElementsAttr transposeDense(DenseElementsAttr value,
                                 ArrayRef<int64_t> permutation);

/// The range [begin, end) of `value` along `axis`, whatever its size (a
/// kernel's taps, cut at compile time). Element types of whole bytes only
/// (null otherwise).
DenseElementsAttr sliceDense(DenseElementsAttr value, int64_t axis,
                             int64_t begin, int64_t end);

/// The bytes of a constant's elements in row-major order: a dense
/// attribute's raw data (not a splat's) or a resource blob's (large
/// weights imported without a copy); nullopt otherwise.
std::optional<ArrayRef<char>> constantBytes(Attribute value);

/// `value` as a dense attribute: itself, or a copy of a resource blob's
/// bytes (for the few places that compute on a large weight's values);
/// null when it is neither.
DenseElementsAttr denseOf(Attribute value);

/// The prefix of the resource blobs that map a model file's weights
/// (ONNX initializers read in place, not copied).
constexpr const char *kMappedWeightsPrefix = "tract_mapped_";

/// When `value` is a resource mapping a model file (kMappedWeightsPrefix),
/// lets the system take back its pages (they are read from the file again
/// if anything reads the weights again): once a weight is packed or
/// quantized, its source stops counting in the process's memory.
void dropMappedPages(Attribute value);

/// Zeroed memory of `size` bytes for weights made at compile time (packed,
/// quantized, laid out for a kernel): mapped pages, in huge pages where
/// the system gives them (such weights are written once; in 4 KB pages the
/// faults cost more than the copy), freed with the blob.
AsmResourceBlob allocateWeights(size_t size);

/// Weights of `type` that the compiler makes, written by `fill` into their
/// zeroed bytes: below kOwnMemoryWeightBytes a dense attribute (printed in
/// the IR, folded like any constant), else a resource named `name` in
/// memory of its own (allocateWeights), not a uniqued attribute, which is
/// built from a copy and never freed.
ElementsAttr makeWeights(ShapedType type, StringRef name,
                         function_ref<void(MutableArrayRef<char>)> fill);
constexpr int64_t kOwnMemoryWeightBytes = int64_t(64) << 10;

using FloatUnaryFn = function_ref<APFloat(const APFloat &)>;
/// On integers; `isUnsigned` tells the signedness. nullopt: do not fold.
using IntUnaryFn =
    function_ref<std::optional<APInt>(const APInt &, bool isUnsigned)>;
using FloatBinaryFn =
    function_ref<std::optional<APFloat>(const APFloat &, const APFloat &)>;
using IntBinaryFn = function_ref<std::optional<APInt>(
    const APInt &, const APInt &, bool isUnsigned)>;
using FloatPredicateFn = function_ref<bool(const APFloat &, const APFloat &)>;
using IntPredicateFn =
    function_ref<bool(const APInt &, const APInt &, bool isUnsigned)>;

/// Applies `fn` to every element of a float (or integer) constant.
Attribute foldUnary(Attribute input, Type resultType, FloatUnaryFn floatFn,
                    IntUnaryFn intFn = nullptr);
/// Applies a double-precision function and rounds back to the element type.
Attribute foldUnaryViaDouble(Attribute input, Type resultType,
                             double (*fn)(double));
/// Tests every element of a float constant.
Attribute foldFloatTest(Attribute input, Type resultType,
                        function_ref<bool(const APFloat &)> test);

/// Element-wise arithmetic on two constants, broadcast to `resultType`.
Attribute foldBinary(Attribute lhs, Attribute rhs, Type resultType,
                     FloatBinaryFn floatFn, IntBinaryFn intFn);
/// Element-wise comparison on two constants, giving booleans.
Attribute foldPredicate(Attribute lhs, Attribute rhs, Type resultType,
                        FloatPredicateFn floatFn, IntPredicateFn intFn);

/// True if `attr` is a constant whose every element equals `value`.
bool isSplatOf(Attribute attr, int64_t value);

/// Converts a constant to another element type (cast semantics).
Attribute foldCast(Attribute input, Type resultType);

/// Maps a result multi-index to the flat index of the input element it
/// copies, or -1 for the fill value; nullopt stops folding (an index out of
/// range, say).
using IndexMapFn =
    function_ref<std::optional<int64_t>(ArrayRef<int64_t> resultIndex)>;
/// Rearranges the elements of a constant into `resultType` (transposes,
/// slices, broadcasts, tiles, gathers all are index maps).
Attribute foldIndexMap(Attribute input, Type resultType, IndexMapFn source,
                       Attribute fill = {});
/// The row-major strides of a static shape.
SmallVector<int64_t> getStrides(ArrayRef<int64_t> shape);
/// Concatenates constants along `axis`.
Attribute foldConcat(ArrayRef<Attribute> inputs, Type resultType, int64_t axis);
/// The values of an integer constant, sign- or zero-extended to 64 bits
/// (booleans and unsigned types are zero-extended), whatever its size.
SmallVector<int64_t> readIntValues(DenseElementsAttr dense);
/// The same for a constant operand worth folding (within the budget).
std::optional<SmallVector<int64_t>> getIntValues(Attribute attr);

/// Reduces `axes` of a constant, keeping them as size 1.
Attribute foldReduce(Attribute input, Type resultType, ArrayRef<int64_t> axes,
                     Reducer reducer, bool last);
/// Evaluates an einsum `expr` on constants.
Attribute foldEinsum(ArrayRef<Attribute> inputs, Type resultType,
                     StringRef expr);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTFOLDING_H
