//===- Winograd.cpp - 3x3 convolutions in Winograd's F(2x2, 3x3) ----------===//
//
// A 3×3 convolution of stride 1 computes each 2×2 block of its outputs from
// a 4×4 patch of its input. Winograd's minimal filtering algorithm does it
// with 16 products per (input channel, output channel) where the direct
// form takes 36: the patch and the kernel are each carried into a 4×4
// space (V = Bᵀ d B, U = G g Gᵀ), multiplied there element by element, and
// the 2×2 outputs are taken back (Y = Aᵀ M A). Summed over the input
// channels, the 16 element-wise products are 16 independent matrix
// products of (blocks × channels) by (channels × outputs), which the
// contraction kernels run at their rate: 2.25 times fewer multiplications
// than the convolution, for the two transforms around them.
//
// The kernel is a constant: its transform U is computed here, once. The
// input transform and the output transform are each one element-wise op
// whose body sums 16 values times coefficients (0 or ±1) that depend on
// the point or the output position; the blocks are the outer axis of the
// three ops, so that on several threads each reads what it wrote.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "dialects/tract/TractFolding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cstring>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCPUWINOGRAD
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// F(2×2, 3×3): outputs per block side, the transformed patch's side, taps.
constexpr int64_t kOut = 2, kAlpha = 4, kTaps = 3;
constexpr int64_t kPoints = kAlpha * kAlpha;

/// Bᵀ, G and Aᵀ of F(2, 3) with the interpolation points 0, 1, -1 and ∞.
constexpr int kBt[kAlpha][kAlpha] = {
    {1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kG[kAlpha][kTaps] = {
    {1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr int kAt[kOut][kAlpha] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/// The constant elements behind `value`, if it is an f32 constant.
ElementsAttr constantOf(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return nullptr;
  auto elements = dyn_cast<ElementsAttr>(constant.getValue());
  if (!elements || !elements.getElementType().isF32())
    return nullptr;
  return elements;
}

/// The kernel's values (kh, kw, c, f) as floats, row-major.
std::optional<std::vector<float>> kernelValues(ElementsAttr kernel) {
  int64_t count = kernel.getNumElements();
  std::vector<float> values(count);
  if (std::optional<ArrayRef<char>> bytes = tract::constantBytes(kernel)) {
    std::memcpy(values.data(), bytes->data(), count * sizeof(float));
    return values;
  }
  DenseElementsAttr dense = tract::denseOf(kernel);
  if (!dense || !dense.isSplat())
    return std::nullopt;
  std::fill(values.begin(), values.end(), dense.getSplatValue<float>());
  return values;
}

/// U = G g Gᵀ for each (c, f) of the kernel g (kh, kw, c, f): (16, c, f),
/// the point (ξ, ν) at 4ξ + ν. Summed in double.
ElementsAttr transformKernel(ArrayRef<float> g, int64_t channels,
                             int64_t outputs, MLIRContext *context) {
  auto type = RankedTensorType::get({kPoints, channels, outputs},
                                    Float32Type::get(context));
  int64_t plane = channels * outputs;
  return tract::makeWeights(
      type, "tract_winograd_weights", [&](MutableArrayRef<char> bytes) {
        auto *u = reinterpret_cast<float *>(bytes.data());
        for (int64_t cf = 0; cf < plane; ++cf) {
          // G g: (4, 3), then (G g) Gᵀ: (4, 4).
          double gg[kAlpha][kTaps] = {};
          for (int64_t xi = 0; xi < kAlpha; ++xi)
            for (int64_t s = 0; s < kTaps; ++s)
              for (int64_t r = 0; r < kTaps; ++r)
                gg[xi][s] += kG[xi][r] * g[(r * kTaps + s) * plane + cf];
          for (int64_t xi = 0; xi < kAlpha; ++xi)
            for (int64_t nu = 0; nu < kAlpha; ++nu) {
              double sum = 0;
              for (int64_t s = 0; s < kTaps; ++s)
                sum += gg[xi][s] * kG[nu][s];
              u[(xi * kAlpha + nu) * plane + cf] = static_cast<float>(sum);
            }
        }
      });
}

/// What a convolution becomes: its operands and sizes.
struct Plan {
  linalg::Conv2DNhwcHwcfOp conv;
  ElementsAttr kernel;
  int64_t n, height, width, channels, outputs;
  int64_t tilesY, tilesX;
  /// The output's start: a per-channel bias (f) or a scalar.
  Value bias;
  bool biasIsVector = false;
};

struct TractCpuWinograd
    : public tract::impl::TractCpuWinogradBase<TractCpuWinograd> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Plan> plans;
    getOperation().walk([&](linalg::Conv2DNhwcHwcfOp conv) {
      if (std::optional<Plan> plan = match(conv))
        plans.push_back(*plan);
    });
    for (Plan &plan : plans)
      if (failed(rewrite(plan)))
        return signalPassFailure();
  }

  std::optional<Plan> match(linalg::Conv2DNhwcHwcfOp conv) {
    if (!conv.hasPureTensorSemantics())
      return std::nullopt;
    if (!llvm::all_of(conv.getStrides().getValues<int64_t>(),
                      [](int64_t s) { return s == 1; }) ||
        !llvm::all_of(conv.getDilations().getValues<int64_t>(),
                      [](int64_t d) { return d == 1; }))
      return std::nullopt;
    auto inputType = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
    auto kernelType =
        dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
    auto outputType = dyn_cast<RankedTensorType>(conv.getType(0));
    if (!inputType || !kernelType || !outputType ||
        !inputType.hasStaticShape() || !kernelType.hasStaticShape() ||
        !outputType.hasStaticShape() || !inputType.getElementType().isF32() ||
        !outputType.getElementType().isF32())
      return std::nullopt;
    ArrayRef<int64_t> k = kernelType.getShape();
    if (k[0] != kTaps || k[1] != kTaps)
      return std::nullopt;
    Plan plan;
    plan.conv = conv;
    plan.kernel = constantOf(conv.getInputs()[1]);
    if (!plan.kernel)
      return std::nullopt;
    ArrayRef<int64_t> out = outputType.getShape();
    plan.n = out[0];
    plan.height = out[1];
    plan.width = out[2];
    plan.channels = k[2];
    plan.outputs = k[3];
    plan.tilesY = llvm::divideCeil(plan.height, kOut);
    plan.tilesX = llvm::divideCeil(plan.width, kOut);
    int64_t tiles = plan.n * plan.tilesY * plan.tilesX;
    if (tiles < minTiles || plan.channels < minChannels ||
        plan.outputs < minChannels)
      return std::nullopt;
    int64_t work = plan.n * plan.height * plan.width * plan.channels *
                   plan.outputs * kTaps * kTaps;
    if (work < minWork)
      return std::nullopt;
    // The output starts from a fill or a per-channel bias broadcast.
    Value init = conv.getDpsInitOperand(0)->get();
    if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
      plan.bias = fill.getInputs()[0];
    } else if (auto broadcast = init.getDefiningOp<linalg::BroadcastOp>()) {
      auto biasType =
          dyn_cast<RankedTensorType>(broadcast.getInput().getType());
      if (!biasType || biasType.getRank() != 1 ||
          !llvm::equal(broadcast.getDimensions(), ArrayRef<int64_t>{0, 1, 2}))
        return std::nullopt;
      plan.bias = broadcast.getInput();
      plan.biasIsVector = true;
    } else {
      return std::nullopt;
    }
    return plan;
  }

  LogicalResult rewrite(Plan &plan);
};

} // namespace

namespace {

/// The Kronecker product of `matrix` (rows × 4) with itself, row-major:
/// entry ((r, s), (a, b)) is matrix[r][a] · matrix[s][b], the coefficient
/// of a 4×4 patch's value (a, b) in M d Mᵀ at (r, s).
template <int64_t Rows>
SmallVector<float> kroneckerSquare(const int (&matrix)[Rows][kAlpha]) {
  SmallVector<float> values;
  for (int64_t r = 0; r < Rows; ++r)
    for (int64_t s = 0; s < Rows; ++s)
      for (int64_t a = 0; a < kAlpha; ++a)
        for (int64_t b = 0; b < kAlpha; ++b)
          values.push_back(static_cast<float>(matrix[r][a] * matrix[s][b]));
  return values;
}

/// The sum of `values` times `weights`, one by one.
Value dot(OpBuilder &b, Location loc, ValueRange values, ValueRange weights) {
  Value sum;
  for (auto [value, weight] : llvm::zip_equal(values, weights)) {
    Value term = arith::MulFOp::create(b, loc, weight, value);
    sum = sum ? arith::AddFOp::create(b, loc, sum, term).getResult() : term;
  }
  return sum;
}

LogicalResult TractCpuWinograd::rewrite(Plan &plan) {
  linalg::Conv2DNhwcHwcfOp conv = plan.conv;
  std::optional<std::vector<float>> g = kernelValues(plan.kernel);
  if (!g)
    return success();
  MLIRContext *context = conv.getContext();
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  Type f32 = b.getF32Type();
  int64_t n = plan.n, ty = plan.tilesY, tx = plan.tilesX;
  int64_t c = plan.channels, f = plan.outputs;
  int64_t tiles = n * ty * tx;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  auto constant = [&](int64_t value) {
    return getAffineConstantExpr(value, context);
  };
  auto tensorOf = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, f32);
  };
  auto empty = [&](ArrayRef<int64_t> shape) -> Value {
    return tensor::EmptyOp::create(b, loc, shape, f32);
  };
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  auto coefficients = [&](ArrayRef<int64_t> shape,
                          ArrayRef<float> values) -> Value {
    auto type = tensorOf(shape);
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, values));
  };

  // The input with zeros to whole blocks: 2 ty + 2 rows, 2 tx + 2 columns.
  Value x = conv.getInputs()[0];
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t rows = kOut * ty + kTaps - 1, cols = kOut * tx + kTaps - 1;
  if (rows > xType.getDimSize(1) || cols > xType.getDimSize(2)) {
    SmallVector<OpFoldResult> low(4, b.getIndexAttr(0)), high = low;
    high[1] = b.getIndexAttr(rows - xType.getDimSize(1));
    high[2] = b.getIndexAttr(cols - xType.getDimSize(2));
    x = tensor::PadOp::create(b, loc, tensorOf({n, rows, cols, c}), x, low,
                              high, zero);
  }

  // V (n, ty, tx, 16, c) = Bᵀ d B in one op over (n, ty, tx, k, c): the
  // 16 values of each block's patch times their coefficients for point k
  // (0 or ±1). The blocks are the outer axes of every op from here on, so
  // that on several threads each one reads the blocks it wrote.
  Value inputCoefficient =
      coefficients({kPoints, kPoints}, kroneckerSquare<kAlpha>(kBt));
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t a = 0; a < kAlpha; ++a)
    for (int64_t bb = 0; bb < kAlpha; ++bb) {
      inputs.push_back(x);
      maps.push_back(AffineMap::get(
          5, 0, {d(0), d(1) * kOut + a, d(2) * kOut + bb, d(4)}, context));
    }
  for (int64_t i = 0; i < kPoints; ++i) {
    inputs.push_back(inputCoefficient);
    maps.push_back(AffineMap::get(5, 0, {d(3), constant(i)}, context));
  }
  maps.push_back(b.getMultiDimIdentityMap(5));
  auto transformType = tensorOf({n, ty, tx, kPoints, c});
  Value v = linalg::GenericOp::create(
                b, loc, TypeRange{transformType}, inputs,
                ValueRange{empty(transformType.getShape())}, maps,
                SmallVector<utils::IteratorType>(
                    5, utils::IteratorType::parallel),
                [&](OpBuilder &nested, Location l, ValueRange args) {
                  linalg::YieldOp::create(
                      nested, l, dot(nested, l, args.take_front(kPoints),
                                     args.slice(kPoints, kPoints)));
                })
                .getResult(0);
  v = tensor::CollapseShapeOp::create(
      b, loc, tensorOf({tiles, kPoints, c}), v,
      SmallVector<ReassociationIndices>{{0, 1, 2}, {3}, {4}});

  // M (blocks, 16, f) = V U: for each point, (blocks, c) × (c, f), over
  // (t, k, f, c).
  ElementsAttr transformed = transformKernel(*g, c, f, context);
  // A kernel read in place from the model file: its pages go back to the
  // system now that the transform holds it.
  tract::dropMappedPages(plan.kernel);
  Value u = arith::ConstantOp::create(b, loc, transformed.getType(),
                                      cast<TypedAttr>(transformed));
  auto productsType = tensorOf({tiles, kPoints, f});
  Value start = linalg::FillOp::create(b, loc, ValueRange{zero},
                                       ValueRange{empty(productsType.getShape())})
                    .getResult(0);
  Value m =
      linalg::GenericOp::create(
          b, loc, TypeRange{productsType}, ValueRange{v, u}, ValueRange{start},
          SmallVector<AffineMap>{
              AffineMap::get(4, 0, {d(0), d(1), d(3)}, context),
              AffineMap::get(4, 0, {d(1), d(3), d(2)}, context),
              AffineMap::get(4, 0, {d(0), d(1), d(2)}, context)},
          SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel,
                                           utils::IteratorType::parallel,
                                           utils::IteratorType::reduction},
          [&](OpBuilder &nested, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nested, l,
                arith::AddFOp::create(
                    nested, l, args[2],
                    arith::MulFOp::create(nested, l, args[0], args[1]))
                    .getResult());
          })
          .getResult(0);
  m = tensor::ExpandShapeOp::create(
      b, loc, tensorOf({n, ty, tx, kPoints, f}), m,
      SmallVector<ReassociationIndices>{{0, 1, 2}, {3}, {4}});

  // Y = Aᵀ M A over (n, ty, i, tx, j, f): output (2 ty + i, 2 tx + j),
  // from the bias, each point times its coefficient for (i, j).
  Value outputCoefficient =
      coefficients({kOut, kOut, kPoints}, kroneckerSquare<kOut>(kAt));
  inputs.assign({plan.bias});
  maps.assign({plan.biasIsVector ? AffineMap::get(6, 0, {d(5)}, context)
                                 : AffineMap::get(6, 0, {}, context)});
  for (int64_t k = 0; k < kPoints; ++k) {
    inputs.push_back(m);
    maps.push_back(
        AffineMap::get(6, 0, {d(0), d(1), d(3), constant(k), d(5)}, context));
  }
  for (int64_t k = 0; k < kPoints; ++k) {
    inputs.push_back(outputCoefficient);
    maps.push_back(AffineMap::get(6, 0, {d(2), d(4), constant(k)}, context));
  }
  maps.push_back(b.getMultiDimIdentityMap(6));
  auto blocksType = tensorOf({n, ty, kOut, tx, kOut, f});
  auto output = linalg::GenericOp::create(
      b, loc, TypeRange{blocksType}, inputs,
      ValueRange{empty(blocksType.getShape())}, maps,
      SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Value sum = dot(nested, l, args.slice(1, kPoints),
                        args.slice(1 + kPoints, kPoints));
        linalg::YieldOp::create(
            nested, l, arith::AddFOp::create(nested, l, args[0], sum).getResult());
      });
  Value result = tensor::CollapseShapeOp::create(
      b, loc, tensorOf({n, kOut * ty, kOut * tx, f}), output.getResult(0),
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4}, {5}});
  if (kOut * ty != plan.height || kOut * tx != plan.width) {
    SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(n), b.getIndexAttr(plan.height),
                                    b.getIndexAttr(plan.width), b.getIndexAttr(f)};
    SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
    result = tensor::ExtractSliceOp::create(b, loc, result, offsets, sizes,
                                            strides);
  }
  conv.getResult(0).replaceAllUsesWith(result);
  conv.erase();
  return success();
}

} // namespace
