//===- ConvRegions.cpp - convolutions cut where their taps read padding --===//
//
// With the shapes known, each output position of a convolution reads the
// input through a range of its kernel's taps; the taps outside that range
// multiply padding. Along one axis the range is the same for the interior
// and changes near the borders. An atrous convolution on a small map (a
// segmentation head's 3x3 of dilation 12 on 16x16) has borders as wide as
// the map: its interior reads one tap, the bands next to it two, and three
// quarters of its products are with zeros. The pass cuts such a
// convolution into regions (the product of the bands of each axis), each
// a convolution over its taps alone, on the slice of the input it reads,
// and concatenates the regions back.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractShapes.h"
#include "passes/DeclutterPatterns.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include <map>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTCONVREGIONS
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Outputs [begin, end) of one axis, computed over the taps [first, last].
struct Band {
  int64_t begin, end, first, last;

  int64_t products() const { return (end - begin) * (last - first + 1); }
};

/// One spatial axis of a convolution, its shapes known.
struct ConvAxis {
  int64_t size, outputs, taps, stride, dilation, low;
  SmallVector<Band> bands;

  /// The input position tap `tap` of output `o` reads.
  int64_t reads(int64_t o, int64_t tap) const {
    return o * stride + tap * dilation - low;
  }
};

/// The bands of `axis`: the runs of outputs that read the input through
/// the same taps, merged (the pair that adds the fewest products first)
/// down to `most`. Fails when an output reads no tap.
LogicalResult cutIntoBands(ConvAxis &axis, size_t most) {
  SmallVector<Band> bands;
  for (int64_t o = 0; o < axis.outputs; ++o) {
    int64_t first = 0, last = axis.taps - 1;
    while (first < axis.taps && axis.reads(o, first) < 0)
      ++first;
    while (last >= first && axis.reads(o, last) >= axis.size)
      --last;
    if (first > last)
      return failure();
    if (!bands.empty() && bands.back().first == first &&
        bands.back().last == last)
      bands.back().end = o + 1;
    else
      bands.push_back({o, o + 1, first, last});
  }
  while (bands.size() > most) {
    size_t best = 0;
    int64_t bestAdded = std::numeric_limits<int64_t>::max();
    for (size_t i = 0; i + 1 < bands.size(); ++i) {
      const Band &a = bands[i], &b = bands[i + 1];
      Band merged{a.begin, b.end, std::min(a.first, b.first),
                  std::max(a.last, b.last)};
      int64_t added = merged.products() - a.products() - b.products();
      if (added < bestAdded) {
        bestAdded = added;
        best = i;
      }
    }
    Band &a = bands[best];
    const Band &b = bands[best + 1];
    a = {a.begin, b.end, std::min(a.first, b.first), std::max(a.last, b.last)};
    bands.erase(bands.begin() + best + 1);
  }
  axis.bands = std::move(bands);
  return success();
}

struct TractConvRegions
    : public tract::impl::TractConvRegionsBase<TractConvRegions> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation().walk([&](ConvOp conv) { convs.push_back(conv); });
    for (ConvOp conv : convs)
      cut(conv);
    SmallVector<MaxPoolOp> pools;
    getOperation().walk([&](MaxPoolOp pool) { pools.push_back(pool); });
    for (MaxPoolOp pool : pools)
      cutPool(pool);
  }

  /// A padded max pool as one valid pool per region, each over the taps
  /// its outputs read inside the input: padding never wins a maximum, so
  /// no region reads it, and the interior pools the input in place where
  /// the whole pool read a padded copy of it (GoogLeNet's pools were
  /// memory-bound on that copy). Every band is kept (a border's band is
  /// one or two rows): a region costs no more products than it computes.
  void cutPool(MaxPoolOp pool) {
    if (pool.getWithIndex() ||
        (pool.getPadding() == Padding::Valid && !pool.getCeilMode()))
      return;
    Shape input = getShape(pool.getInput());
    Shape output = getShape(pool.getOutput().getType());
    ArrayRef<int64_t> kernel = pool.getKernelShape();
    int64_t inputAxis = pool.getChannelsLast() ? 1 : 2;
    auto at = [](ArrayRef<int64_t> values, int64_t axis, int64_t otherwise) {
      return values.empty() ? otherwise : values[axis];
    };
    SmallVector<ConvAxis> axes;
    size_t regions = 1;
    for (auto [i, taps] : llvm::enumerate(kernel)) {
      if (inputAxis + i >= input.size())
        return;
      std::optional<int64_t> size = input[inputAxis + i].getConstant();
      std::optional<int64_t> outputs = output[inputAxis + i].getConstant();
      if (!size || !outputs)
        return;
      ConvAxis axis{*size, *outputs, taps, at(pool.getStrides(), i, 1),
                    at(pool.getDilations(), i, 1), 0, {}};
      std::optional<std::pair<int64_t, int64_t>> pads =
          staticPoolPads(pool, i, *size, *outputs, taps);
      if (!pads)
        return;
      axis.low = pads->first;
      if (failed(cutIntoBands(axis, std::numeric_limits<size_t>::max())))
        return;
      regions *= axis.bands.size();
      axes.push_back(std::move(axis));
    }
    // Cut into at most a few regions per axis' borders (3 x 3 for a pool
    // padded on both sides).
    if (regions > 16)
      return;
    OpBuilder builder(pool);
    Location loc = pool.getLoc();
    MLIRContext *context = pool.getContext();
    // The slices made so far, shared by the regions that read them.
    std::map<std::tuple<void *, int64_t, int64_t, int64_t>, Value> slices;
    std::function<Value(SmallVector<size_t> &)> region =
        [&](SmallVector<size_t> &choice) -> Value {
      Value piece = pool.getInput();
      SmallVector<int64_t> taps;
      for (auto [i, axis] : llvm::enumerate(axes)) {
        const Band &band = axis.bands[choice[i]];
        int64_t from = axis.reads(band.begin, band.first);
        int64_t to = axis.reads(band.end - 1, band.last) + 1;
        if (from != 0 || to != axis.size) {
          Value &made = slices[{piece.getAsOpaquePointer(),
                                int64_t(inputAxis + i), from, to}];
          if (!made)
            made = sliceOrCut(builder, loc, piece, inputAxis + i, from, to);
          piece = made;
        }
        taps.push_back(band.last - band.first + 1);
      }
      Operation *copy = builder.clone(*pool);
      copy->setOperands({piece});
      auto cut = cast<MaxPoolOp>(copy);
      cut.setKernelShape(taps);
      cut.setPadding(Padding::Valid);
      cut.setPadsBefore({});
      cut.setPadsAfter({});
      cut.setCeilMode(false);
      SmallVector<Type> types;
      if (failed(cut.inferReturnTypes(
              context, loc, copy->getOperands(), copy->getAttrDictionary(),
              copy->getPropertiesStorage(), copy->getRegions(), types)))
        llvm::report_fatal_error("a max pool's region has no type");
      copy->getResult(0).setType(types[0]);
      return cut.getOutput();
    };
    std::function<Value(SmallVector<size_t> &, size_t)> assemble =
        [&](SmallVector<size_t> &choice, size_t i) -> Value {
      if (i == axes.size())
        return region(choice);
      SmallVector<Value> parts;
      for (size_t band = 0; band < axes[i].bands.size(); ++band) {
        choice[i] = band;
        parts.push_back(assemble(choice, i + 1));
      }
      if (parts.size() == 1)
        return parts.front();
      return ConcatOp::create(builder, loc, parts, uint64_t(inputAxis + i));
    };
    SmallVector<size_t> choice(axes.size(), 0);
    Value result = assemble(choice, 0);
    if (result.getType() != pool.getOutput().getType())
      llvm::report_fatal_error("a max pool's regions changed its type");
    pool.getOutput().replaceAllUsesWith(result);
    pool->erase();
  }

  /// The spatial axes of `conv`, when its shapes are known.
  std::optional<SmallVector<ConvAxis>> axesOf(ConvOp conv) {
    Shape input = getShape(conv.getInput());
    Shape output = getShape(conv.getType());
    auto kernel = cast<RankedTensorType>(conv.getKernel().getType());
    int64_t spatial = kernel.getRank() - 2;
    int64_t inputAxis = conv.getChannelsLast() ? 1 : 2;
    int64_t kernelAxis = conv.getChannelsLast() ? 0 : 2;
    auto at = [](ArrayRef<int64_t> values, int64_t axis, int64_t otherwise) {
      return values.empty() ? otherwise : values[axis];
    };
    SmallVector<ConvAxis> axes;
    for (int64_t i = 0; i < spatial; ++i) {
      std::optional<int64_t> size = input[inputAxis + i].getConstant();
      std::optional<int64_t> outputs = output[inputAxis + i].getConstant();
      int64_t taps = kernel.getDimSize(kernelAxis + i);
      if (!size || !outputs || ShapedType::isDynamic(taps))
        return std::nullopt;
      ConvAxis axis{*size, *outputs, taps, at(conv.getStrides(), i, 1),
                    at(conv.getDilations(), i, 1), 0, {}};
      std::optional<std::pair<int64_t, int64_t>> pads =
          staticConvPads(conv, i, *size, *outputs, taps);
      if (!pads)
        return std::nullopt;
      axis.low = pads->first;
      if (failed(cutIntoBands(axis, maxBands)))
        return std::nullopt;
      axes.push_back(std::move(axis));
    }
    return axes;
  }

  void cut(ConvOp conv) {
    if (conv.getPadding() == Padding::Valid)
      return;
    std::optional<SmallVector<ConvAxis>> axes = axesOf(conv);
    if (!axes)
      return;
    // An axis is cut where its own bands save enough; elsewhere one band
    // covers it. Each region has a kernel of its own, made at compile
    // time: the sum of their taps, against the kernel's, bounds the
    // weights the regions add (r3d-18's 7x7 maps, cut along every axis,
    // multiplied its last layers' weights by seven).
    double kept = 1, all = 1, weights = 1;
    size_t regions = 1;
    for (ConvAxis &axis : *axes) {
      int64_t products = 0, taps = 0;
      for (const Band &band : axis.bands)
        products += band.products();
      if (products > (1.0 - minSaved) * axis.outputs * axis.taps) {
        int64_t first = axis.taps, last = 0;
        for (const Band &band : axis.bands) {
          first = std::min(first, band.first);
          last = std::max(last, band.last);
        }
        axis.bands = {Band{0, axis.outputs, first, last}};
        products = axis.bands.front().products();
      }
      for (const Band &band : axis.bands)
        taps += band.last - band.first + 1;
      kept *= static_cast<double>(products);
      all *= static_cast<double>(axis.outputs * axis.taps);
      weights *= static_cast<double>(taps) / axis.taps;
      regions *= axis.bands.size();
    }
    if (regions == 1 || kept > (1.0 - minSaved) * all ||
        weights > maxWeights)
      return;
    // Multiply-adds per tap and output position.
    Shape kernelShape = getShape(conv.getKernel());
    std::optional<int64_t> perTap =
        kernelShape[conv.getChannelsLast() ? kernelShape.size() - 1 : 0]
            .getConstant();
    std::optional<int64_t> channels =
        kernelShape[conv.getChannelsLast() ? kernelShape.size() - 2 : 1]
            .getConstant();
    if (!perTap || !channels ||
        (all - kept) * static_cast<double>(*perTap * *channels) < minWork)
      return;

    OpBuilder builder(conv);
    Location loc = conv.getLoc();
    MLIRContext *context = conv.getContext();
    int64_t inputAxis = conv.getChannelsLast() ? 1 : 2;
    int64_t kernelAxis = conv.getChannelsLast() ? 0 : 2;
    // The slices made so far, shared by the regions that read them.
    std::map<std::tuple<void *, int64_t, int64_t, int64_t>, Value> slices;
    auto slice = [&](Value value, int64_t axis, int64_t begin, int64_t end,
                     int64_t size) {
      if (begin == 0 && end == size)
        return value;
      Value &made =
          slices[{value.getAsOpaquePointer(), axis, begin, end}];
      if (!made)
        made = sliceOrCut(builder, loc, value, axis, begin, end);
      return made;
    };
    // The region of band choice[i] on each axis i.
    std::function<Value(SmallVector<size_t> &)> region =
        [&](SmallVector<size_t> &choice) -> Value {
      Value input = conv.getInput(), kernel = conv.getKernel();
      SmallVector<int64_t> before, after;
      for (auto [i, axis] : llvm::enumerate(*axes)) {
        const Band &band = axis.bands[choice[i]];
        int64_t low = axis.reads(band.begin, band.first);
        int64_t high = axis.reads(band.end - 1, band.last) + 1;
        int64_t from = std::max<int64_t>(low, 0);
        int64_t to = std::min(high, axis.size);
        input = slice(input, inputAxis + i, from, to, axis.size);
        kernel = slice(kernel, kernelAxis + i, band.first, band.last + 1,
                       axis.taps);
        before.push_back(from - low);
        after.push_back(high - to);
      }
      SmallVector<Value> operands{input, kernel};
      if (conv.getBias())
        operands.push_back(conv.getBias());
      Operation *copy = builder.clone(*conv);
      copy->setOperands(operands);
      auto piece = cast<ConvOp>(copy);
      piece.setPadding(Padding::Explicit);
      piece.setPadsBefore(before);
      piece.setPadsAfter(after);
      SmallVector<Type> types;
      if (failed(piece.inferReturnTypes(
              context, loc, copy->getOperands(), copy->getAttrDictionary(),
              copy->getPropertiesStorage(), copy->getRegions(), types)))
        llvm::report_fatal_error("a convolution's region has no type");
      copy->getResult(0).setType(types[0]);
      return piece.getResult();
    };
    // Concatenates the regions along the axes from `i` on, the bands of the
    // axes before it fixed in `choice`.
    std::function<Value(SmallVector<size_t> &, size_t)> assemble =
        [&](SmallVector<size_t> &choice, size_t i) -> Value {
      if (i == axes->size())
        return region(choice);
      SmallVector<Value> parts;
      for (size_t band = 0; band < (*axes)[i].bands.size(); ++band) {
        choice[i] = band;
        parts.push_back(assemble(choice, i + 1));
      }
      if (parts.size() == 1)
        return parts.front();
      return ConcatOp::create(builder, loc, parts, uint64_t(inputAxis + i));
    };
    SmallVector<size_t> choice(axes->size(), 0);
    Value result = assemble(choice, 0);
    if (result.getType() != conv.getType())
      llvm::report_fatal_error("a convolution's regions changed its type");
    conv.getResult().replaceAllUsesWith(result);
    conv->erase();
  }
};

} // namespace
