//===- DeclutterPatterns.h - the rewrites of tract-declutter ----*- C++ -*-===//
//
// Each family of declutter rewrites lives in its own file and adds its
// patterns to the set that tract-declutter runs to a fixpoint, next to the
// dialect's folders and canonicalization patterns.
//
//===----------------------------------------------------------------------===//

#ifndef PASSES_DECLUTTERPATTERNS_H
#define PASSES_DECLUTTERPATTERNS_H

#include "dialects/tract/TractOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::tract {

/// Absorbing elements (integer x * 0) and float division by a constant
/// turned into a multiplication by its reciprocal.
void populateDeclutterArithmeticPatterns(RewritePatternSet &patterns);

/// Batch-norm and per-channel affine folding into conv weights and bias.
void populateDeclutterAffinePatterns(RewritePatternSet &patterns);

/// 1x1 convolutions as einsums; tract-declutter adds them once the other
/// patterns have converged, so that batch norms fold into the conv first.
void populateDeclutterConvToEinsumPatterns(RewritePatternSet &patterns);

/// Fused activations and normalizations recognized from their expanded
/// forms: silu, gelu_approx, rms_norm, softmax.
void populateDeclutterActivationPatterns(RewritePatternSet &patterns);

/// Transformer blocks from their ONNX expansions: rotary embeddings
/// (apply_rope) and scaled dot-product attention (sdpa), grouped-query
/// repetitions of keys and values undone.
void populateDeclutterTransformerPatterns(RewritePatternSet &patterns);

/// Axis changes: chains of move_axis composed (and cancelled), add/rm_axis
/// pairs cancelled, move_axis pushed down through element-wise, slice, axis,
/// reduction and normalization ops or pulled up, and absorbed into the
/// letters of an einsum; reshapes, slices and slices of concats composed;
/// a scatter_nd writing one block at constant indices made a concat.
void populateDeclutterAxisPatterns(RewritePatternSet &patterns);

/// Scans: full inputs captured, dead states, inputs and outputs dropped,
/// single-iteration scans inlined, ops of a scanned chunk and invariants
/// (the input half of a recurrent matmul) hoisted out of the loop.
void populateDeclutterScanPatterns(RewritePatternSet &patterns);

/// A product by Q4_0 blocks read from a file becomes block_quant_matmul on
/// them (BlockQuant.cpp).
void populateBlockDequantPatterns(RewritePatternSet &patterns);
/// The block_dequant ops that no product took: f32 constants.
void foldBlockDequant(Operation *root);
/// Products of rows by weights a model stores as f16 (a large f16 constant
/// cast to f32): block_quant_matmul on the f16 values, which the kernel
/// widens as it reads them, rather than the cast at every run and an f32
/// product (BlockQuant.cpp).
void absorbStoredHalves(Operation *root);

/// A tract op applied to each element: one operand and a result of its type
/// (neg, exp, sigmoid...).
/// The padding before and after spatial axis `axis` (0 for the first
/// spatial axis) of `conv`, whose input has `size` positions along it, its
/// output `outputs` and its kernel `taps`: explicit, or what `same_upper`
/// and `same_lower` come to.
std::optional<std::pair<int64_t, int64_t>>
staticConvPads(ConvOp conv, int64_t axis, int64_t size, int64_t outputs,
               int64_t taps);
/// The same for a max pool's window.
std::optional<std::pair<int64_t, int64_t>>
staticPoolPads(MaxPoolOp pool, int64_t axis, int64_t size, int64_t outputs,
               int64_t taps);

/// The range [begin, end) of `value` along `axis`: cut at compile time when
/// `value` is a constant (a kernel, whatever its size), a tract.slice
/// otherwise.
Value sliceOrCut(OpBuilder &builder, Location loc, Value value, int64_t axis,
                 int64_t begin, int64_t end);

bool isElementwiseUnary(Operation *op);
/// A broadcasting element-wise binary op (arithmetic, comparisons, logic).
bool isElementwiseBinary(Operation *op);

/// The dense value of `value` when a tract.const defines it.
DenseElementsAttr getConstantValue(Value value);

/// The value of a float splat constant, if `value` is one.
std::optional<double> getSplatFloat(Value value);

/// Calls `fn(a, b)` with the operands of a binary `op` in both orders, until
/// it returns true.
bool eitherOrder(Operation *op, function_ref<bool(Value, Value)> fn);

} // namespace mlir::tract

#endif // PASSES_DECLUTTERPATTERNS_H
