//===- Pulsify.cpp - batch models over a time axis become streaming -------===//
//
// A model whose inputs carry the streaming symbol `S` on one axis is
// rewritten to take `pulse` frames of that axis per call. Every value that
// carries `S` is described by a Stream: its axis, its delay (stream frame t
// holds batch frame t - delay; earlier frames are garbage) and its batch
// length. Ops are visited in program order and each is rewritten for the
// pulses its operands now have:
//
// * element-wise ops, einsum, axis ops and ops working on other axes keep
//   their shape of computation; streamed operands with different delays are
//   realigned by delaying the earlier ones (tract.delay);
// * a window op (conv, pools) over the streaming axis sees its padding
//   become a tract.pulse_pad and its kernel's reach an overlap of past
//   frames (tract.delay's overlap), then runs unpadded on each pulse;
// * a pad becomes a pulse_pad, a slice a change of delay;
// * a scan over the stream carries its states from one pulse to the next
//   and skips the iterations before its input's delay (`pulse.skip`); a
//   scan across it (over another axis) runs whole at each pulse, the
//   streams it reads delayed alike first.
//
// What cannot stream (a reduction over the streaming axis, a scan running
// backwards) is an error naming the op and the reason. The output delays
// and axes are recorded in the module's `tract.properties`.
//
// The rules are the ops' own (PulsifyOpInterface, implemented in
// dialects/tract/TractPulse.cpp over a PulseContext); this file sets up the
// input streams, visits the ops and records the result.
//
//===----------------------------------------------------------------------===//

#include "dialects/tract/TractDialect.h"
#include "dialects/tract/TractModule.h"
#include "dialects/tract/TractOps.h"
#include "dialects/tract/TractPulse.h"
#include "dialects/tract/TractShapes.h"
#include "passes/Passes.h"
#include "passes/PulseWindows.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTPULSIFY
#include "passes/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;
using namespace mlir::tract;

namespace {

/// Pulsifies the main function of a module, op by op in program order: an
/// op's PulsifyOpInterface, else the rules of its trait or interface
/// (element-wise, WorkAxesOpInterface), else a refusal naming it.
class Pulsifier {
public:
  Pulsifier(ModuleOp module, func::FuncOp func, std::string symbol,
            int64_t pulse)
      : module(module), func(func), context(std::move(symbol), pulse) {}

  LogicalResult run();

private:
  LogicalResult pulsifyOp(Operation *op);

  ModuleOp module;
  func::FuncOp func;
  PulseContext context;
};

LogicalResult Pulsifier::pulsifyOp(Operation *op) {
  return pulsifyOperation(context, op);
}

LogicalResult Pulsifier::run() {
  StringRef symbol = context.getSymbol();
  int64_t pulse = context.getPulse();
  // Blocks over the stream twice (attention masked to a window) first.
  if (failed(unfoldStreamWindows(func, symbol)))
    return failure();
  Block &entry = func.getBody().front();
  SmallVector<int64_t> inputAxes;
  for (BlockArgument argument : entry.getArguments()) {
    if (!mentionsSymbol(argument.getType(), symbol)) {
      inputAxes.push_back(-1);
      continue;
    }
    Shape shape = getShape(argument);
    std::optional<int64_t> axis;
    for (auto [index, dim] : llvm::enumerate(shape)) {
      if (!mentionsSymbol(dim, symbol))
        continue;
      if (axis || dim.getSymbolName() != symbol)
        return func.emitError("input ")
               << argument.getArgNumber() << " has the shape "
               << shapeToString(shape) << "; a streamed input must have "
               << symbol << " itself on exactly one axis";
      axis = index;
    }
    shape[*axis] = TDim(pulse);
    argument.setType(getTensorTypeLike(argument.getType(), shape));
    context.setStream(argument, Stream{*axis, 0, TDim::symbol(symbol)});
    inputAxes.push_back(*axis);
  }
  if (llvm::all_of(inputAxes, [](int64_t axis) { return axis < 0; }))
    return func.emitError("no input streams over ") << symbol;

  for (Operation &op : llvm::make_early_inc_range(entry.without_terminator()))
    if (failed(pulsifyOp(&op)))
      return failure();

  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  SmallVector<int64_t> outputAxes, delays;
  std::vector<TDim> lengths;
  for (Value output : ret.getOperands()) {
    if (!context.isStreamed(output)) {
      unsigned index = outputAxes.size();
      auto name = func.getResultAttrOfType<StringAttr>(index, "tract.name");
      return ret.emitError("output ")
             << (name ? "'" + name.str() + "'" : std::to_string(index))
             << " does not stream over " << symbol
             << ": it does not keep the frames of the streaming axis (a "
                "streaming model's outputs must)";
    }
    Stream stream = context.getStream(output);
    outputAxes.push_back(stream.axis);
    delays.push_back(stream.delay);
    lengths.push_back(stream.dim);
  }
  func.setFunctionType(FunctionType::get(
      module.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));

  // Identity slices left by the slices of the stream.
  func.walk([](SliceOp slice) {
    if (slice.getInput().getType() == slice.getOutput().getType() &&
        slice.getStart().getValue() == TDim(0)) {
      slice.getOutput().replaceAllUsesWith(slice.getInput());
      slice.erase();
    }
  });

  PulseProperties properties;
  properties.symbol = symbol.str();
  properties.pulse = pulse;
  properties.inputAxes = inputAxes;
  properties.outputAxes = outputAxes;
  properties.delays = delays;
  properties.outputLengths = std::move(lengths);
  setPulseProperties(module, properties);
  return success();
}

struct PulsifyPass : mlir::tract::impl::TractPulsifyBase<PulsifyPass> {
  using TractPulsifyBase::TractPulsifyBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string name = symbol;
    if (name.empty()) {
      // The only symbol, or `S`, tract's streaming symbol.
      std::set<std::string> symbols = collectModuleSymbols(module);
      if (symbols.size() != 1 && symbols.count("S"))
        symbols = {"S"};
      if (symbols.size() != 1) {
        std::string names;
        for (const std::string &name : symbols)
          names += (names.empty() ? "" : ", ") + name;
        module.emitError("the model has ")
            << symbols.size() << " symbols (" << names
            << "); name the one to pulsify, e.g. --pulse "
            << (symbols.empty() ? "S" : *symbols.rbegin()) << "="
            << static_cast<int64_t>(pulse);
        return signalPassFailure();
      }
      name = *symbols.begin();
    }
    if (pulse <= 0) {
      module.emitError("the pulse must be a positive number of frames");
      return signalPassFailure();
    }
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("the model has no main function to pulsify");
      return signalPassFailure();
    }
    if (failed(Pulsifier(module, main, name, pulse).run()))
      return signalPassFailure();
  }
};

} // namespace
