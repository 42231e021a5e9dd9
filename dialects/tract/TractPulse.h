//===- TractPulse.h - how a tract op streams over pulses --------*- C++ -*-===//
//
// The vocabulary of pulsification (see passes/Pulsify.cpp, the driver):
// a Stream says how a pulsed value maps to its batch value, and a
// PulseContext holds the streams of one model being pulsified with the
// rewrites the ops' PulsifyOpInterface implementations share (delaying,
// padding and realigning streams, re-inferring a rewritten op).
//
//===----------------------------------------------------------------------===//

#ifndef DIALECTS_TRACT_TRACTPULSE_H
#define DIALECTS_TRACT_TRACTPULSE_H

#include "dialects/tract/TractShapes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::tract {

/// How a pulsed value maps to its batch value.
struct Stream {
  int64_t axis = 0;
  /// Frame t of the stream is frame t - delay of the batch value.
  int64_t delay = 0;
  /// The batch value's length on the axis.
  TDim dim;
  /// Input frames per frame of this value, scaleNum / scaleDen: the
  /// product of the strides over that of the upsamplings.
  int64_t scaleNum = 1, scaleDen = 1;

  /// This stream after a stride (`factor` > 1) or an upsampling
  /// (`factor` < -1).
  void rescale(int64_t factor);
  /// The smallest input pulse that gives this stream a multiple of
  /// `stride` frames.
  int64_t requiredMultiple(int64_t stride) const;
};

/// Whether `dim`, or a dim of the tract tensor type `type`, mentions
/// `symbol`.
bool mentionsSymbol(const TDim &dim, StringRef symbol);
bool mentionsSymbol(Type type, StringRef symbol);

/// The streams of a model being pulsified over `symbol` with `pulse` frames
/// per call, and the rewrites op rules share. Ops are rewritten in program
/// order, so an op's operands have their streams when it is visited.
class PulseContext {
public:
  PulseContext(std::string symbol, int64_t pulse)
      : symbol(std::move(symbol)), pulse(pulse) {}

  StringRef getSymbol() const { return symbol; }
  int64_t getPulse() const { return pulse; }

  bool isStreamed(Value value) const { return streams.count(value); }
  /// Whether any operand of `op` is streamed, or any value its regions read
  /// from outside.
  bool anyStreamed(Operation *op) const;
  /// The stream of a streamed value.
  Stream getStream(Value value) const { return streams.lookup(value); }
  void setStream(Value value, Stream stream) {
    streams[value] = std::move(stream);
  }
  /// The number of frames of a streamed value per pulse.
  int64_t pulseOf(Value value) const;

  /// An error at `op` saying why it cannot be pulsified, naming its model
  /// node when the frontend recorded one.
  InFlightDiagnostic error(Operation *op) const;
  /// Fails, naming the input pulse multiple needed, unless `stride`
  /// divides the pulse of `input`.
  LogicalResult checkStride(Operation *op, Value input, int64_t stride) const;

  /// `value` delayed by `frames` more, before `op`.
  Value delayBy(Operation *op, Value value, int64_t frames);
  /// Delays the streamed operands of `op` among `operands` so that they all
  /// have the largest delay, which is returned.
  int64_t alignDelays(Operation *op, ArrayRef<unsigned> operands);
  /// `input` (of stream `stream`) padded by `before` and `after` frames of
  /// `value`, before `op`, delayed first when its delay cannot hold the
  /// padding before it; `stream` becomes the padded stream's.
  Value padStream(Operation *op, Value input, Stream &stream, int64_t before,
                  int64_t after, TypedAttr value);

  /// Re-infers `op`'s result types from its (pulsed) operands; fails when a
  /// result still depends on the stream length.
  LogicalResult reinfer(Operation *op);
  /// Re-infers `op` and gives its result `stream`, with the batch length
  /// `original` has on the stream's axis.
  LogicalResult reinferWith(Operation *op, Stream stream,
                            const Shape &original);
  /// Realigns every streamed operand of `op`, re-infers it and gives its
  /// result `stream` on `axis`, with the operands' delay and the batch
  /// length of that axis.
  LogicalResult alignAndReinfer(Operation *op, Stream stream, int64_t axis);
  /// For an op that works on other axes than the streaming one of its
  /// first operand, whose other operands do not stream: re-infers it and
  /// gives its result the stream of its input on `newAxis`.
  LogicalResult moveStreamAxis(Operation *op, int64_t newAxis);

private:
  std::string symbol;
  int64_t pulse;
  llvm::DenseMap<Value, Stream> streams;
};

/// The rules for ops without a PulsifyOpInterface of their own: an
/// element-wise op streams its operands' frames, and a WorkAxesOpInterface
/// op any axis it does not work along.
LogicalResult pulsifyElementwise(PulseContext &context, Operation *op);
LogicalResult pulsifyWorkAxes(PulseContext &context, Operation *op);

/// Pulsifies one op: its PulsifyOpInterface, else the rules of its trait
/// or interface (element-wise, WorkAxesOpInterface), else a refusal naming
/// it. An op none of whose operands stream is left alone, unless it starts
/// a stream or its result depends on the stream length.
LogicalResult pulsifyOperation(PulseContext &context, Operation *op);

} // namespace mlir::tract

#endif // DIALECTS_TRACT_TRACTPULSE_H
