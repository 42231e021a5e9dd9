//===- VectorTiles.h - loops of static vector tiles over buffers -*- C++ -*-===//
//
// The pieces the CPU kernels share: cutting a dim into tiles whose sizes
// are all static, and reading or writing one row of a tile as a vector
// wherever the indexing map puts it.
//
//===----------------------------------------------------------------------===//

#ifndef CODEGEN_CPU_VECTORTILES_H
#define CODEGEN_CPU_VECTORTILES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::tract {

/// The coefficient of `dim` in `expr` when `expr` is linear in it (0 when
/// `expr` does not use it), nullopt otherwise.
std::optional<int64_t> coefficientOf(AffineExpr expr, unsigned dim,
                                     unsigned numDims);

/// The axis of an operand that loop dim `dim` walks, and its stride: at
/// most one result of `map` may use `dim`, linearly with a positive stride.
/// {nullopt, 0} when no result uses it; failure when the map is not of
/// that form.
FailureOr<std::pair<std::optional<unsigned>, int64_t>>
vectorAxisOf(AffineMap map, unsigned dim);

/// One range of a tiled dim: [begin, end) in tiles of `tile`.
struct Piece {
  OpFoldResult begin, end;
  int64_t tile;
};

/// Cuts [0, size) into tiles of `tile` and the rest: tiles of at most
/// `restTile` when the size is static, single elements when it is not, so
/// that every tile has a static size.
SmallVector<Piece> cutIntoTiles(OpBuilder &b, Location loc, OpFoldResult size,
                                int64_t tile, int64_t restTile);

/// A run [first, last) of a loop's iterations (or of a piece's tiles,
/// counted from the piece's start).
using IterationRange = std::pair<Value, Value>;

/// Loops over `piece`'s tiles carrying `init`: `body` gets the first index
/// of each tile and the carried values, and returns their next values,
/// which the loop returns after the last tile. A piece of one tile needs
/// no loop. With `only`, just those tiles.
SmallVector<Value> foldTiles(
    OpBuilder &b, Location loc, const Piece &piece, ValueRange init,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>
        body,
    std::optional<IterationRange> only = std::nullopt);

/// foldTiles carrying nothing.
void forEachTile(OpBuilder &b, Location loc, const Piece &piece,
                 function_ref<void(OpBuilder &, Location, Value)> body,
                 std::optional<IterationRange> only = std::nullopt);

/// How a kernel shares its work among threads: its whole nest runs once
/// per chunk, in an `scf.parallel` over `count` chunks, and one loop of the
/// nest takes only the chunk's run of its iterations.
struct Chunks {
  Value index;       ///< this chunk (null: no chunks, all iterations)
  int64_t count = 1; ///< how many
  /// How many at run time, when the op shares its work only if it is
  /// large enough (`count` or 1); null: `count`.
  Value countValue;

  explicit operator bool() const { return static_cast<bool>(index); }

  /// The run of [0, `iterations`) for this chunk: equal runs, the first
  /// ones one longer when they do not divide (the last chunk also takes
  /// the remainder tiles, see `inLast`).
  IterationRange runOf(OpBuilder &b, Location loc,
                       OpFoldResult iterations) const;
  /// The tiles of `piece` for this chunk.
  IterationRange tilesOf(OpBuilder &b, Location loc,
                         const Piece &piece) const;
  /// Emits `body` for the last chunk only.
  void inLast(OpBuilder &b, Location loc,
              function_ref<void(OpBuilder &, Location)> body) const;

  /// forEachTile over the tiles of `piece` this chunk runs: its run of
  /// them for the piece of `full` tiles, all of them in the last chunk for
  /// a remainder piece; all of them without chunks.
  void forEachTile(OpBuilder &b, Location loc, const Piece &piece,
                   function_ref<void(OpBuilder &, Location, Value)> body,
                   bool full) const;
};

/// The indices `map` gives at the loop dims `dims` (only the dims each
/// result uses are read: the others may be out of scope).
SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                             ArrayRef<Value> dims);

/// `cols` elements of `memref` from `at`, `stride` apart along `axis`, as a
/// vector: a contiguous load, a wider load and a shuffle for small strides,
/// a strided view (scalar loads) otherwise.
Value readVector(OpBuilder &b, Location loc, Value memref, ValueRange at,
                 unsigned axis, int64_t stride, int64_t cols);

/// Writes `vector` into `memref` from `at` along `axis` (contiguous).
void writeVector(OpBuilder &b, Location loc, Value vector, Value memref,
                 ValueRange at, unsigned axis);

/// Whether every op of a linalg body computes lane by lane (arith and math
/// ops, constants, and `linalg.index` when `allowIndex`), and, when
/// `allowLoads`, loads from buffers defined outside the body at indices the
/// body computes (each lane its own element: a gather).
bool isLaneWiseBody(Block *body, bool allowIndex, bool allowLoads = false);

/// A linalg body run on vectors of `width` lanes: `arguments` holds one
/// vector per block argument (null for an unused one); values from outside
/// the body and constants are broadcast; `index(dim)` gives the lanes of a
/// `linalg.index`; a `memref.load` becomes a gather. Returns the vector of
/// the yielded value.
Value emitLaneWiseBody(OpBuilder &b, Location loc, Block *body,
                       ArrayRef<Value> arguments, int64_t width,
                       function_ref<Value(unsigned dim)> index = nullptr);

/// The loop dims of a linalg op while a kernel emits its loops: the range
/// of each dim and its current value (0 until a loop sets it).
class LoopDims {
public:
  /// Ranges are computed at `b`'s insertion point.
  LoopDims(OpBuilder &b, linalg::LinalgOp op);

  OpFoldResult size(unsigned dim) const { return ranges[dim].size; }

  using Body =
      function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;
  using Bounds =
      function_ref<std::pair<Value, Value>(OpBuilder &, Location, unsigned)>;

  /// One loop per dim of `loops`, outermost first, each over [0, size) or
  /// over `bounds(dim)` when given, setting the dim's value; the loops
  /// carry `init` to `body` and return what it yields last.
  SmallVector<Value> nest(OpBuilder &b, Location loc, ArrayRef<unsigned> loops,
                          ValueRange init, Body body, Bounds bounds = nullptr);

  /// The loops over `loops` (carrying nothing) once per chunk of
  /// `chunkCount`, in an `scf.parallel` when there are several, the loop
  /// of `chunkedDim` (if any) over the chunk's run of its range only;
  /// `body` runs inside them with the chunk (no chunks for a count of 1).
  /// With `forkPoints` (breakEvenPoints), the chunks are one at run time
  /// when the op's iteration points are fewer, or when the chunked loop
  /// has a single iteration: its parallel region then runs on the calling
  /// thread alone (tract-cpu-fork-if).
  void nestInChunks(
      OpBuilder &b, Location loc, ArrayRef<unsigned> loops,
      int64_t chunkCount, std::optional<unsigned> chunkedDim,
      function_ref<void(OpBuilder &, Location, const Chunks &)> body,
      double forkPoints = 0);

  SmallVector<Value> values; ///< the current value of every dim

private:
  SmallVector<Range> ranges;
};

/// A value (a scalar) on every one of `width` lanes.
Value splatLanes(OpBuilder &b, Location loc, Value value, int64_t width);

} // namespace mlir::tract

#endif // CODEGEN_CPU_VECTORTILES_H
