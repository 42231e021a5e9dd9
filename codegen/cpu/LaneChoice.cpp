//===- LaneChoice.cpp - which loop of a product goes on vector lanes ------===//

#include "codegen/cpu/LaneChoice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

bool tract::isMultiplyAccumulate(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      body->getNumArguments() != 3 || body->getOperations().size() != 3)
    return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body->getArgument(2);
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value a = body->getArgument(0), b = body->getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

/// The share of lanes that do work over a dim of `size` (1 when unknown).
static double laneUse(int64_t size, int64_t lanes) {
  if (ShapedType::isDynamic(size) || size <= 0)
    return 1.0;
  int64_t registers = (size + lanes - 1) / lanes;
  return double(size) / double(registers * lanes);
}

std::optional<tract::LaneChoice>
tract::chooseLaneDim(linalg::LinalgOp op, int64_t lanes,
                     llvm::function_ref<bool(unsigned input)> packable) {
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outputMap.isProjectedPermutation() || outputMap.getNumResults() == 0)
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap maps[2] = {op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
                       op.getMatchingIndexingMap(op.getDpsInputOperand(1))};

  // The input that alone walks `dim`, if exactly one does.
  auto walker = [&](unsigned dim) -> std::optional<unsigned> {
    bool uses0 = maps[0].isFunctionOfDim(dim);
    bool uses1 = maps[1].isFunctionOfDim(dim);
    if (uses0 == uses1)
      return std::nullopt;
    return uses0 ? 0u : 1u;
  };
  auto isLastAxis = [&](unsigned input, unsigned dim) {
    auto last = dyn_cast<AffineDimExpr>(maps[input].getResults().back());
    return last && last.getPosition() == dim;
  };

  unsigned innermost =
      cast<AffineDimExpr>(outputMap.getResults().back()).getPosition();
  std::optional<unsigned> innerInput = walker(innermost);
  if (!innerInput)
    return std::nullopt;
  LaneChoice best{innermost, *innerInput,
                  !isLastAxis(*innerInput, innermost) && packable(*innerInput) &&
                      maps[*innerInput].isProjectedPermutation()};
  double bestUse = laneUse(sizes[innermost], lanes);

  // Another lane dim pays only when it fills clearly more lanes and the
  // reduction is long enough to hide its strided output accesses: each
  // tile reads and writes its accumulators lane by lane, and that code is
  // unrolled per tile shape (512 steps: a 3×3 kernel over 64 channels).
  int64_t reduction = 1;
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::reduction)
      reduction = ShapedType::isDynamic(sizes[dim])
                      ? std::numeric_limits<int32_t>::max()
                      : reduction * sizes[dim];
  if (reduction < 512)
    return best;
  for (AffineExpr expr : outputMap.getResults().drop_back()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    std::optional<unsigned> input = walker(dim);
    if (!input || !maps[*input].isProjectedPermutation())
      continue;
    bool contiguous = isLastAxis(*input, dim);
    if (!contiguous && !packable(*input))
      continue;
    double use = laneUse(sizes[dim], lanes);
    if (use >= bestUse + 0.25) {
      best = {dim, *input, !contiguous};
      bestUse = use;
    }
  }
  return best;
}
