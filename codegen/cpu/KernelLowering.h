//===- KernelLowering.h - what the fused CPU kernels share ------*- C++ -*-===//
//
// The kernels that lower tract ops themselves, ahead of the conversion
// (attention, block-quantized products), run the conversion's patterns on
// the ops they take and build the same loops.
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_CPU_KERNELLOWERING_H
#define CODEGEN_CPU_KERNELLOWERING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tract {

/// Lowers the tract ops of `func` that a fused kernel takes, ahead of
/// tract-lower-to-linalg: binds the function's symbols, then converts the
/// ops that the patterns `populate` adds match (with the tract type
/// converter, the other ops seeing the results through casts). An op that
/// `configure` marks illegal must be lowered; others that no pattern
/// lowers stay for tract-lower-to-linalg.
LogicalResult lowerToKernels(
    func::FuncOp func,
    function_ref<void(const TypeConverter &, RewritePatternSet &)> populate,
    function_ref<void(ConversionTarget &)> configure = {});

/// An scf.forall over `counts` whose iterations each write one slice of
/// `init`, at `offsets` and of `sizes` (given the induction variables by
/// `where`), which `body` computes from the slice as it was.
Value forallOverSlices(
    OpBuilder &b, Location loc, ArrayRef<OpFoldResult> counts, Value init,
    function_ref<void(ValueRange, SmallVectorImpl<OpFoldResult> &offsets,
                      SmallVectorImpl<OpFoldResult> &sizes)>
        where,
    function_ref<Value(ValueRange, Value)> body);
/// `body(row, rows, out)` over rows [0, count) of `init`, `block` rows at a
/// time and then the rows left one by one, carrying the tensor it writes.
Value forRowBlocks(OpBuilder &b, Location loc, Value count, int64_t block,
                   Value init, function_ref<Value(Value, int64_t, Value)> body);
/// The four bytes of `quad` (a vector<4xi8>) as one i32 repeated in
/// `lanes` lanes, viewed as `lanes * 4` bytes: the operand of a byte dot
/// product that every lane shares.
Value repeatQuad(OpBuilder &b, Location loc, Value quad, int64_t lanes);
/// acc (`lanes` i32) + the sums of the four products of `first` by signed
/// `second` bytes (`lanes * 4` each, `first` signed when `firstSigned`, else
/// unsigned) in each lane, in the form tract-convert-vector-to-llvm selects
/// a dot-product instruction for (vpdpbusd, sdot).
Value byteDot(OpBuilder &b, Location loc, Value acc, Value first,
              Value second, bool firstSigned);

} // namespace mlir::tract

#endif // CODEGEN_CPU_KERNELLOWERING_H
