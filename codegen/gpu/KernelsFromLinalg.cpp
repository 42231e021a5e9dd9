//===- KernelsFromLinalg.cpp - the tract-gpu-kernels-from-linalg pass -----===//
//
// One GPU kernel per linalg op on buffers: an invocation per iteration of
// the parallel loops, the reductions in the invocation. The host keeps the
// shape arithmetic: it flattens each operand to its base buffer and passes
// the loop bounds, offsets and strides as parameters. Those known when
// compiling (static shapes and layouts) are constants in the kernel, which
// the device's compiler can fold (divisions by a constant, unrolled
// reductions); the kernel reads the others once, at its start.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTGPUKERNELSFROMLINALG
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kKernelModule = "tract_kernels";
/// Rows of a product's output tile each invocation of its tiled kernel
/// computes.
constexpr int64_t kRows = 4;
/// Workgroups along x at most (Vulkan's guaranteed minimum of
/// maxComputeWorkGroupCount); more go along y.
constexpr int64_t kMaxGroupsX = 65535;

/// The spelling of an element type in the pass's `types` option.
std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << type;
  return name;
}

/// The math ops SPIR-V's GLSL instructions implement: all of them on f16
/// and f32, the exact ones on f64 too (GLSL's transcendentals take no
/// doubles). Not powf: GLSL's Pow is undefined for a negative base, where
/// the CPU's gives NaN or the signed power.
bool isKernelMath(Operation *op) {
  if (isa<math::AbsFOp, math::AbsIOp, math::CeilOp, math::FloorOp, math::FmaOp,
          math::RoundEvenOp, math::RoundOp, math::RsqrtOp, math::SqrtOp>(op))
    return true;
  if (!isa<math::CosOp, math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op,
           math::SinOp, math::TanhOp, math::AtanOp, math::Atan2Op, math::AsinOp,
           math::AcosOp, math::SinhOp, math::CoshOp, math::TanOp>(op))
    return false;
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    Type element = getElementTypeOrSelf(type);
    return element.isF16() || element.isF32();
  });
}

/// Whether `value` views a memref.get_global: weights, which never change.
bool isConstantData(Value value) {
  return tract::viewedBuffer(value).getDefiningOp<memref::GetGlobalOp>() !=
         nullptr;
}

/// Whether `op` writes every element of its init `operand`'s span, reading
/// none of them first: an operand of the identity layout (its span is its
/// elements), whose indexing map reaches each element (a projected
/// permutation onto all of its dims), and whose value the payload does not
/// use.
bool writesWholeSpan(linalg::LinalgOp op, OpOperand &operand) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type || !type.getLayout().isIdentity() ||
      op.payloadUsesValueFromOperand(&operand))
    return false;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  return map.isProjectedPermutation(/*allowZeroInResults=*/false) &&
         map.getNumResults() == type.getRank();
}

/// Why `op` cannot be a kernel, or "" if it can.
std::string whyNotAKernel(linalg::LinalgOp op, const llvm::StringSet<> &allowed,
                          int64_t minWork) {
  if (!op.hasPureBufferSemantics())
    return "not on buffers";
  if (op->getParentOfType<gpu::GPUModuleOp>())
    return "already in a kernel";
  // Shape arithmetic and the like: a launch would cost more than the op.
  uint64_t iterations = 1;
  for (int64_t extent : op.getStaticLoopRanges())
    iterations = ShapedType::isDynamic(extent)
                     ? std::numeric_limits<uint64_t>::max()
                     : llvm::SaturatingMultiply(iterations,
                                                static_cast<uint64_t>(extent));
  if (iterations < static_cast<uint64_t>(std::max<int64_t>(minWork, 0)))
    return "too little work";
  auto typeAllowed = [&](Type type) {
    return allowed.contains(typeName(getElementTypeOrSelf(type)));
  };
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type) {
      // A scalar input (a fill's value): a constant the kernel rebuilds.
      if (!operand.getDefiningOp<arith::ConstantOp>() ||
          !typeAllowed(operand.getType()))
        return "a scalar operand that is not a constant";
      continue;
    }
    if (!type.isStrided() || !typeAllowed(type))
      return "an operand of type " + typeName(type);
  }
  for (Operation &bodyOp : op.getBlock()->without_terminator()) {
    if (bodyOp.getNumRegions() || !isPure(&bodyOp))
      return "'" + bodyOp.getName().getStringRef().str() + "' in its body";
    bool known = isa<arith::ArithDialect>(bodyOp.getDialect()) ||
                 isa<linalg::IndexOp>(bodyOp) || isKernelMath(&bodyOp);
    if (!known)
      return "'" + bodyOp.getName().getStringRef().str() + "' in its body";
    for (Type type : bodyOp.getResultTypes())
      if (!type.isIndex() && !typeAllowed(type))
        return "a value of type " + typeName(type) + " in its body";
  }
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegion(0), captured);
  for (Value value : captured)
    if (!value.getDefiningOp<arith::ConstantOp>())
      return "a value from outside its body";
  return "";
}

/// The loops of a product a kernel tiles through workgroup memory: one
/// row loop m (of the first input and the output), one column loop n (of
/// the second input and the output), one reduction k (of both inputs), and
/// batch loops (of all three).
struct Contraction {
  unsigned m, n, k;
  SmallVector<unsigned> batch;
};

/// `op` as a product to tile by `tile`, or nothing: two inputs and an
/// output through projected permutations, their loops as Contraction
/// says, element types of 8 bits or more, and static extents (where known)
/// of at least a tile.
std::optional<Contraction> asContraction(linalg::LinalgOp op, int64_t tile) {
  if (tile <= 0 || tile % kRows != 0 || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getElementTypeBitWidth() < 8 ||
        !op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return std::nullopt;
  }
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap b = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  Contraction found;
  SmallVector<unsigned> ms, ns, ks;
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    bool inA = a.isFunctionOfDim(d), inB = b.isFunctionOfDim(d),
         inOut = out.isFunctionOfDim(d);
    bool parallel = iterators[d] == utils::IteratorType::parallel;
    if (!parallel && inA && inB && !inOut)
      ks.push_back(d);
    else if (parallel && inA && !inB && inOut)
      ms.push_back(d);
    else if (parallel && !inA && inB && inOut)
      ns.push_back(d);
    else if (parallel && inA && inB && inOut)
      found.batch.push_back(d);
    else
      return std::nullopt;
  }
  if (ms.size() != 1 || ns.size() != 1 || ks.size() != 1)
    return std::nullopt;
  found.m = ms[0];
  found.n = ns[0];
  found.k = ks[0];
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  for (unsigned d : {found.m, found.n, found.k})
    if (!ShapedType::isDynamic(extents[d]) && extents[d] < tile)
      return std::nullopt;
  return found;
}

/// Builds one kernel and its launch.
class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op, gpu::GPUModuleOp kernels,
                int64_t workgroupSize, int64_t tile, StringRef name)
      : op(op), kernels(kernels), workgroupSize(workgroupSize), tile(tile),
        name(name.str()), loc(op.getLoc()) {
    contraction = asContraction(op, tile);
    if (contraction)
      this->workgroupSize = tile * tile / kRows;
  }

  void build() {
    OpBuilder host(op);
    buildHost(host);
    gpu::GPUFuncOp kernel = contraction ? buildTiledKernel() : buildKernel();
    Value one = arith::ConstantIndexOp::create(host, loc, 1);
    auto launch = gpu::LaunchFuncOp::create(
        host, loc, kernel, gpu::KernelDim3{gridX, gridY, gridZ},
        gpu::KernelDim3{
            arith::ConstantIndexOp::create(host, loc, workgroupSize), one, one},
        /*dynamicSharedMemorySize=*/Value(), arguments);
    launch->setAttr(tract::kBufferUsesAttrName,
                    host.getDenseI32ArrayAttr(uses));
    op->erase();
  }

private:
  static Value index(OpBuilder &b, Location loc, int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// The host's half: bounds, flat operands, parameters, the grid. Leaves
  /// `b` where the launch goes (skipped when there is nothing to do).
  void buildHost(OpBuilder &b) {
    Value one = index(b, loc, 1);
    SmallVector<Range> ranges = op.createLoopRanges(b, loc);
    SmallVector<Value> bounds;
    for (Range &range : ranges)
      bounds.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
    Value invocations = one;
    std::optional<int64_t> knownInvocations = 1;
    for (auto [bound, iterator] :
         llvm::zip(bounds, op.getIteratorTypesArray())) {
      if (iterator != utils::IteratorType::parallel)
        continue;
      invocations = arith::MulIOp::create(b, loc, invocations, bound);
      std::optional<int64_t> size = getConstantIntValue(bound);
      knownInvocations = knownInvocations && size
                             ? std::optional(*knownInvocations * *size)
                             : std::nullopt;
    }

    SmallVector<Value> parameters = {invocations};
    known = {knownInvocations};
    llvm::append_range(parameters, bounds);
    for (Value bound : bounds)
      known.push_back(getConstantIntValue(bound));
    layout.assign(op->getNumOperands(), -1);
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        continue;
      auto metadata =
          memref::ExtractStridedMetadataOp::create(b, loc, operand.get());
      // The elements from the base to the last one the operand reaches.
      Value span = arith::AddIOp::create(b, loc, metadata.getOffset(), one);
      for (auto [size, stride] :
           llvm::zip(metadata.getSizes(), metadata.getStrides())) {
        Value last = arith::SubIOp::create(b, loc, size, one);
        span = arith::AddIOp::create(
            b, loc, span, arith::MulIOp::create(b, loc, last, stride));
      }
      span = arith::MaxSIOp::create(b, loc, span, one);
      // A view of a whole buffer (a part of a concatenation, the interior
      // of a padded tensor) spans that buffer: its views are then one
      // device buffer for the runtime, whichever part each launch reaches.
      Value whole = tract::viewedBuffer(operand.get());
      auto wholeType = dyn_cast<MemRefType>(whole.getType());
      // Whether the span is the operand's elements, neither more nor fewer.
      bool spansOperand = true;
      if (whole != operand.get() && wholeType &&
          wholeType.getLayout().isIdentity() &&
          wholeType.getElementType() == type.getElementType()) {
        spansOperand = type.hasStaticShape() && wholeType.hasStaticShape() &&
                       type.getNumElements() == wholeType.getNumElements();
        span = one;
        for (int64_t d = 0; d < wholeType.getRank(); ++d)
          span = arith::MulIOp::create(
              b, loc, span, memref::DimOp::create(b, loc, whole, d));
      }
      auto flatType =
          MemRefType::get({ShapedType::kDynamic}, type.getElementType());
      layout[operand.getOperandNumber()] = parameters.size();
      argumentOf[operand.getOperandNumber()] = arguments.size();
      // A written buffer is read too, unless the kernel writes every
      // element of the span and reads none first: it writes its operand's
      // elements, and the others of the span must come back as they were.
      bool written = op.isDpsInit(&operand);
      uses.push_back(written ? (spansOperand && writesWholeSpan(op, operand)
                                    ? tract::kBufferWritten
                                    : tract::kBufferRead | tract::kBufferWritten)
                     : isConstantData(operand.get())
                         ? tract::kBufferRead | tract::kBufferConstant
                         : tract::kBufferRead);
      arguments.push_back(memref::ReinterpretCastOp::create(
          b, loc, flatType, metadata.getBaseBuffer(),
          OpFoldResult(b.getIndexAttr(0)), ArrayRef<OpFoldResult>{span},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
      parameters.push_back(metadata.getOffset());
      llvm::append_range(parameters, metadata.getStrides());
      // What the operand's layout fixes.
      auto [strides, offset] = type.getStridesAndOffset();
      auto fixed = [](int64_t value) -> std::optional<int64_t> {
        if (ShapedType::isDynamic(value))
          return std::nullopt;
        return value;
      };
      known.push_back(fixed(offset));
      for (int64_t stride : strides)
        known.push_back(fixed(stride));
    }
    assert(known.size() == parameters.size() && "a fact per parameter");

    Type i32 = b.getI32Type();
    auto tableType =
        MemRefType::get({static_cast<int64_t>(parameters.size())}, i32);
    if (llvm::all_of(known, [](std::optional<int64_t> value) {
          return value.has_value();
        })) {
      // Every parameter known while compiling: a constant table, which the
      // runtime uploads once, as it does the weights.
      SmallVector<int32_t> values;
      for (std::optional<int64_t> value : known)
        values.push_back(static_cast<int32_t>(*value));
      auto module = op->getParentOfType<ModuleOp>();
      OpBuilder detached(op.getContext());
      auto global = memref::GlobalOp::create(
          detached, loc, "__tract_kernel_parameters",
          detached.getStringAttr("private"), tableType,
          DenseElementsAttr::get(
              RankedTensorType::get(tableType.getShape(), i32),
              ArrayRef<int32_t>(values)),
          /*constant=*/true, /*alignment=*/nullptr);
      SymbolTable(module).insert(global);
      Value table =
          memref::GetGlobalOp::create(b, loc, tableType, global.getSymName());
      arguments.push_back(memref::CastOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, i32), table));
      uses.push_back(tract::kBufferRead | tract::kBufferConstant);
    } else {
      // On the caller's stack once, not per iteration of a loop around.
      auto caller = op->getParentOfType<FunctionOpInterface>();
      OpBuilder entry =
          OpBuilder::atBlockBegin(&caller.getFunctionBody().front());
      auto table = memref::AllocaOp::create(entry, loc, tableType);
      table->setAttr(tract::kParametersAttrName,
                     UnitAttr::get(op.getContext()));
      for (auto [position, value] : llvm::enumerate(parameters))
        memref::StoreOp::create(b, loc,
                                arith::IndexCastOp::create(b, loc, i32, value),
                                table, ValueRange{index(b, loc, position)});
      arguments.push_back(memref::CastOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, i32), table));
      uses.push_back(tract::kBufferRead);
    }

    gridZ = one;
    if (contraction) {
      // A workgroup per tile of the output: columns along x, rows along y,
      // batches along z.
      gridX = arith::CeilDivUIOp::create(b, loc, bounds[contraction->n],
                                         index(b, loc, tile));
      gridY = arith::CeilDivUIOp::create(b, loc, bounds[contraction->m],
                                         index(b, loc, tile));
      for (unsigned d : contraction->batch)
        gridZ = arith::MulIOp::create(b, loc, gridZ, bounds[d]);
    } else {
      // Enough groups for every invocation, along x then y.
      Value groups = arith::CeilDivUIOp::create(b, loc, invocations,
                                                index(b, loc, workgroupSize));
      gridX = arith::MaxUIOp::create(
          b, loc,
          arith::MinUIOp::create(b, loc, groups, index(b, loc, kMaxGroupsX)),
          one);
      gridY = arith::CeilDivUIOp::create(b, loc, groups, gridX);
    }
    Value some = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       invocations, index(b, loc, 0));
    auto run = scf::IfOp::create(b, loc, some, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&run.getThenRegion().front());
  }

  /// An empty kernel for the launch's arguments (and `workgroup`
  /// buffers), with its parameters at hand; `b` at its start.
  gpu::GPUFuncOp startKernel(OpBuilder &b, TypeRange workgroup = {}) {
    MLIRContext *context = op.getContext();
    SmallVector<Type> argumentTypes =
        llvm::map_to_vector(arguments, [](Value v) { return v.getType(); });
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(kernels.getBody());
    auto kernel = gpu::GPUFuncOp::create(
        moduleBuilder, loc, name, FunctionType::get(context, argumentTypes, {}),
        workgroup);
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                    UnitAttr::get(context));
    kernel->setAttr(spirv::getEntryPointABIAttrName(),
                    spirv::getEntryPointABIAttr(
                        context, {static_cast<int32_t>(workgroupSize), 1, 1}));
    SymbolTable(kernels).insert(kernel);

    Block &entry = kernel.getBody().front();
    for (auto [number, position] : argumentOf)
      flat[number] = entry.getArgument(position);
    table = entry.getArgument(arguments.size() - 1);
    b.setInsertionPointToStart(&entry);
    // The parameters not known when compiling, read once.
    for (auto [position, fact] : llvm::enumerate(known))
      if (!fact)
        loaded[position] = arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            memref::LoadOp::create(b, loc, table, index(b, loc, position)));
    return kernel;
  }

  /// The kernel's half: the invocation's loop indices, the reductions, the
  /// body, the stores.
  gpu::GPUFuncOp buildKernel() {
    OpBuilder b(op.getContext());
    gpu::GPUFuncOp kernel = startKernel(b);
    Value group = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
            gpu::GridDimOp::create(b, loc, gpu::Dimension::x)),
        gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
    Value id = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, group, index(b, loc, workgroupSize)),
        gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id,
                                          parameter(b, 0));
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    gpu::ReturnOp::create(b, loc);
    b.setInsertionPointToStart(&guard.getThenRegion().front());

    unsigned loops = op.getNumLoops();
    SmallVector<Value> bounds;
    for (unsigned d = 0; d < loops; ++d)
      bounds.push_back(parameter(b, 1 + d));
    // The parallel indices from the invocation's id, the last fastest.
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    indices.assign(loops, Value());
    Value rest = id;
    for (int d = static_cast<int>(loops) - 1; d >= 0; --d) {
      if (iterators[d] != utils::IteratorType::parallel)
        continue;
      indices[d] = arith::RemUIOp::create(b, loc, rest, bounds[d]);
      rest = arith::DivUIOp::create(b, loc, rest, bounds[d]);
    }

    // Outputs start from their values (linalg's init) when the body or a
    // reduction reads them.
    bool reduces = op.getNumReductionLoops() > 0;
    SmallVector<Value> outputs;
    for (OpOperand &init : op.getDpsInitsMutable()) {
      Type element = getElementTypeOrSelf(init.get().getType());
      // (Otherwise any value: the body does not read it.)
      outputs.push_back(
          reduces || op.payloadUsesValueFromOperand(&init)
              ? read(b, init)
              : arith::ConstantOp::create(b, loc, b.getZeroAttr(element))
                    .getResult());
    }
    SmallVector<Value> results;
    if (!reduces) {
      results = applyBody(b, outputs);
    } else {
      // A loop nest over the reduction dims, carrying the outputs.
      OpBuilder at = b;
      SmallVector<Value> carried = outputs;
      scf::ForOp outermost;
      for (unsigned d = 0; d < loops; ++d) {
        if (iterators[d] == utils::IteratorType::parallel)
          continue;
        auto loop = scf::ForOp::create(at, loc, index(at, loc, 0), bounds[d],
                                       index(at, loc, 1), carried);
        if (outermost)
          scf::YieldOp::create(at, loc, loop.getResults());
        else
          outermost = loop;
        indices[d] = loop.getInductionVar();
        carried.assign(loop.getRegionIterArgs().begin(),
                       loop.getRegionIterArgs().end());
        at.setInsertionPointToStart(loop.getBody());
      }
      scf::YieldOp::create(at, loc, applyBody(at, carried));
      results.assign(outermost.getResults().begin(),
                     outermost.getResults().end());
    }
    for (auto [init, result] : llvm::zip(op.getDpsInitsMutable(), results))
      memref::StoreOp::create(b, loc, result, flat[init.getOperandNumber()],
                              ValueRange{address(b, init)});
    return kernel;
  }

  /// The tiled kernel of a product: a workgroup of tile x tile / kRows
  /// invocations per tile of the output, each invocation kRows elements of
  /// one of its columns. Along k, the workgroup copies a tile of each input
  /// into workgroup memory (zero past the edges), waits, and each
  /// invocation reduces its rows of the first with its column of the
  /// second there, each element of the column serving its kRows rows.
  gpu::GPUFuncOp buildTiledKernel() {
    const Contraction &c = *contraction;
    auto workgroupMemory = gpu::AddressSpaceAttr::get(
        op.getContext(), gpu::AddressSpace::Workgroup);
    Type aElement = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
    Type bElement = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
    auto tileType = [&](Type element) {
      return MemRefType::get({tile * tile}, element,
                             MemRefLayoutAttrInterface(), workgroupMemory);
    };
    OpBuilder b(op.getContext());
    gpu::GPUFuncOp kernel =
        startKernel(b, {tileType(aElement), tileType(bElement)});
    Value aTile = kernel.getWorkgroupAttributions()[0];
    Value bTile = kernel.getWorkgroupAttributions()[1];

    unsigned loops = op.getNumLoops();
    SmallVector<Value> bounds;
    for (unsigned d = 0; d < loops; ++d)
      bounds.push_back(parameter(b, 1 + d));
    Value tileSize = index(b, loc, tile);
    Value thread = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    // This invocation's column of the tile, and its group of kRows rows.
    Value column = arith::RemUIOp::create(b, loc, thread, tileSize);
    Value rowGroup = arith::DivUIOp::create(b, loc, thread, tileSize);
    Value firstRow = arith::MulIOp::create(
        b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::y), tileSize);
    Value firstColumn = arith::MulIOp::create(
        b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), tileSize);
    indices.assign(loops, Value());
    indices[c.n] = arith::AddIOp::create(b, loc, firstColumn, column);
    Value rest = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
    for (unsigned d : llvm::reverse(c.batch)) {
      indices[d] = arith::RemUIOp::create(b, loc, rest, bounds[d]);
      rest = arith::DivUIOp::create(b, loc, rest, bounds[d]);
    }
    auto below = [&](OpBuilder &at, Value value, Value bound) -> Value {
      return arith::CmpIOp::create(at, loc, arith::CmpIPredicate::ult, value,
                                   bound);
    };
    // `operand`'s element at the indices where `valid`, else zero.
    auto readIf = [&](OpBuilder &at, Value valid, OpOperand &operand) {
      Type element = getElementTypeOrSelf(operand.get().getType());
      auto choice = scf::IfOp::create(at, loc, TypeRange{element}, valid,
                                      /*withElseRegion=*/true);
      OpBuilder then = choice.getThenBodyBuilder();
      scf::YieldOp::create(then, loc, read(then, operand));
      OpBuilder otherwise = choice.getElseBodyBuilder();
      scf::YieldOp::create(otherwise, loc,
                           arith::ConstantOp::create(
                               otherwise, loc, otherwise.getZeroAttr(element))
                               .getResult());
      return choice.getResult(0);
    };
    Value inColumns = below(b, indices[c.n], bounds[c.n]);
    // The rows this invocation computes: kRows consecutive ones.
    SmallVector<Value> rows, inside;
    OpOperand &output = *op.getDpsInitOperand(0);
    SmallVector<Value> initial;
    for (int64_t r = 0; r < kRows; ++r) {
      Value inTile = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, rowGroup, index(b, loc, kRows)),
          index(b, loc, r));
      rows.push_back(inTile);
      indices[c.m] = arith::AddIOp::create(b, loc, firstRow, inTile);
      inside.push_back(arith::AndIOp::create(
          b, loc, below(b, indices[c.m], bounds[c.m]), inColumns));
      initial.push_back(readIf(b, inside.back(), output));
    }

    Value zero = index(b, loc, 0);
    Value extent = bounds[c.k];
    auto steps = scf::ForOp::create(b, loc, zero, extent, tileSize, initial);
    {
      OpBuilder at = OpBuilder::atBlockBegin(steps.getBody());
      Value start = steps.getInductionVar();
      // The workgroup copies both tiles, each invocation kRows elements of
      // each: row rowGroup + i * (tile / kRows) of its column.
      for (int64_t i = 0; i < kRows; ++i) {
        Value row = arith::AddIOp::create(at, loc, rowGroup,
                                          index(at, loc, i * (tile / kRows)));
        Value slot = arith::AddIOp::create(
            at, loc, arith::MulIOp::create(at, loc, row, tileSize), column);
        // The first input at (firstRow + row, start + column).
        indices[c.m] = arith::AddIOp::create(at, loc, firstRow, row);
        indices[c.k] = arith::AddIOp::create(at, loc, start, column);
        Value aValid =
            arith::AndIOp::create(at, loc, below(at, indices[c.m], bounds[c.m]),
                                  below(at, indices[c.k], extent));
        memref::StoreOp::create(at, loc,
                                readIf(at, aValid, *op.getDpsInputOperand(0)),
                                aTile, ValueRange{slot});
        // The second at (start + row, firstColumn + column).
        indices[c.k] = arith::AddIOp::create(at, loc, start, row);
        Value bValid = arith::AndIOp::create(at, loc, inColumns,
                                             below(at, indices[c.k], extent));
        memref::StoreOp::create(at, loc,
                                readIf(at, bValid, *op.getDpsInputOperand(1)),
                                bTile, ValueRange{slot});
      }
      gpu::BarrierOp::create(at, loc);
      // The tile's length along k: less at the last one, unless the
      // tiles divide k.
      std::optional<int64_t> depth = known[1 + c.k];
      Value length = depth && *depth % tile == 0
                         ? tileSize
                         : arith::MinUIOp::create(
                               at, loc, tileSize,
                               arith::SubIOp::create(at, loc, extent, start))
                               .getResult();
      auto inner = scf::ForOp::create(at, loc, zero, length, index(at, loc, 1),
                                      steps.getRegionIterArgs());
      {
        OpBuilder body = OpBuilder::atBlockBegin(inner.getBody());
        Value step = inner.getInductionVar();
        indices[c.k] = arith::AddIOp::create(body, loc, start, step);
        Value bValue = memref::LoadOp::create(
            body, loc, bTile,
            ValueRange{arith::AddIOp::create(
                body, loc, arith::MulIOp::create(body, loc, step, tileSize),
                column)});
        SmallVector<Value> sums;
        for (int64_t r = 0; r < kRows; ++r) {
          indices[c.m] = arith::AddIOp::create(body, loc, firstRow, rows[r]);
          Value a = memref::LoadOp::create(
              body, loc, aTile,
              ValueRange{arith::AddIOp::create(
                  body, loc,
                  arith::MulIOp::create(body, loc, rows[r], tileSize), step)});
          sums.push_back(
              applyBodyTo(body, {a, bValue}, inner.getRegionIterArgs()[r])[0]);
        }
        scf::YieldOp::create(body, loc, sums);
      }
      // Everyone done with the tiles before the next ones overwrite them.
      gpu::BarrierOp::create(at, loc);
      scf::YieldOp::create(at, loc, inner.getResults());
    }
    for (int64_t r = 0; r < kRows; ++r) {
      auto store = scf::IfOp::create(b, loc, inside[r],
                                     /*withElseRegion=*/false);
      OpBuilder then = store.getThenBodyBuilder();
      indices[c.m] = arith::AddIOp::create(then, loc, firstRow, rows[r]);
      memref::StoreOp::create(then, loc, steps.getResult(r),
                              flat[output.getOperandNumber()],
                              ValueRange{address(then, output)});
    }
    gpu::ReturnOp::create(b, loc);
    return kernel;
  }

  /// Word `position` of the parameters, as an index: a constant when it
  /// is known, else what the kernel read at its start.
  Value parameter(OpBuilder &b, int64_t position) {
    if (std::optional<int64_t> fact = known[position])
      return index(b, loc, *fact);
    return loaded.lookup(position);
  }

  /// Where `operand`'s element at the current indices is in its buffer.
  Value address(OpBuilder &b, OpOperand &operand) {
    int64_t base = layout[operand.getOperandNumber()];
    AffineMap map = op.getMatchingIndexingMap(&operand);
    Value linear = parameter(b, base);
    for (auto [axis, expr] : llvm::enumerate(map.getResults())) {
      Value at = affine::expandAffineExpr(b, loc, expr, indices, {});
      Value stride = parameter(b, base + 1 + axis);
      linear = arith::AddIOp::create(b, loc, linear,
                                     arith::MulIOp::create(b, loc, at, stride));
    }
    return linear;
  }

  /// `operand`'s element at the current indices (a scalar operand is a
  /// constant, rebuilt).
  Value read(OpBuilder &b, OpOperand &operand) {
    Value value = operand.get();
    if (!isa<MemRefType>(value.getType()))
      return b.clone(*value.getDefiningOp())->getResult(0);
    return memref::LoadOp::create(b, loc, flat[operand.getOperandNumber()],
                                  ValueRange{address(b, operand)});
  }

  /// The op's body on its inputs at the current indices and `outputs`;
  /// returns what it yields.
  SmallVector<Value> applyBody(OpBuilder &b, ValueRange outputs) {
    SmallVector<Value> inputs;
    for (OpOperand *input : op.getDpsInputOperands())
      inputs.push_back(read(b, *input));
    return applyBodyTo(b, inputs, outputs);
  }

  /// The op's body on `inputs` and `outputs` at the current indices.
  SmallVector<Value> applyBodyTo(OpBuilder &b, ValueRange inputs,
                                 ValueRange outputs) {
    Block *body = op.getBlock();
    IRMapping mapping;
    for (auto [input, value] : llvm::zip(op.getDpsInputOperands(), inputs))
      mapping.map(body->getArgument(input->getOperandNumber()), value);
    for (auto [init, value] : llvm::zip(op.getDpsInitsMutable(), outputs))
      mapping.map(body->getArgument(init.getOperandNumber()), value);
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegion(0), captured);
    for (Value value : captured)
      mapping.map(value, b.clone(*value.getDefiningOp())->getResult(0));
    for (Operation &bodyOp : body->without_terminator()) {
      if (auto indexOp = dyn_cast<linalg::IndexOp>(bodyOp)) {
        mapping.map(indexOp.getResult(), indices[indexOp.getDim()]);
        continue;
      }
      b.clone(bodyOp, mapping);
    }
    return llvm::map_to_vector(
        body->getTerminator()->getOperands(),
        [&](Value value) { return mapping.lookupOrDefault(value); });
  }

  linalg::LinalgOp op;
  gpu::GPUModuleOp kernels;
  int64_t workgroupSize;
  /// The tile of a product's kernel (0: none), and the product's loops.
  int64_t tile;
  std::optional<Contraction> contraction;
  std::string name;
  Location loc;
  /// The launch's arguments: the flat operands, then the parameters; and
  /// how the kernel uses each.
  SmallVector<Value> arguments;
  SmallVector<int32_t> uses;
  Value gridX, gridY, gridZ;
  /// Per operand: its position among the arguments (memrefs only), the
  /// position of its offset in the parameters (-1 for a scalar), and in
  /// the kernel, its flat buffer.
  llvm::DenseMap<unsigned, unsigned> argumentOf;
  SmallVector<int64_t> layout;
  llvm::DenseMap<unsigned, Value> flat;
  Value table;
  /// Per parameter: its value when known while compiling; in the kernel,
  /// the load of the others.
  SmallVector<std::optional<int64_t>> known;
  llvm::DenseMap<int64_t, Value> loaded;
  SmallVector<Value> indices;
};

struct TractGpuKernelsFromLinalgPass
    : public tract::impl::TractGpuKernelsFromLinalgBase<
          TractGpuKernelsFromLinalgPass> {
  using Base::Base;

  /// Replaces `copy` with the linalg.generic that copies element by
  /// element, where that could be a kernel (ranked memrefs of the same
  /// shape, of an element type the device has, and enough of them).
  void asElementWise(memref::CopyOp copy, const llvm::StringSet<> &allowed) {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!source || !target || source.getShape() != target.getShape() ||
        source.getElementType() != target.getElementType())
      return;
    OpBuilder b(copy);
    auto identity = b.getMultiDimIdentityMap(source.getRank());
    SmallVector<utils::IteratorType> iterators(source.getRank(),
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, copy.getLoc(), ValueRange{copy.getSource()},
        ValueRange{copy.getTarget()}, ArrayRef<AffineMap>{identity, identity},
        iterators, [](OpBuilder &nested, Location loc, ValueRange values) {
          linalg::YieldOp::create(nested, loc, values.front());
        });
    if (!whyNotAKernel(generic, allowed, minWork).empty()) {
      generic.erase();
      return;
    }
    copy.erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> allowed;
    for (StringRef type : llvm::split(StringRef(allowedTypes), ','))
      if (!type.trim().empty())
        allowed.insert(type.trim());
    // Copies between buffers (a concatenation's parts, a padded input's
    // interior) become element-wise ops first, so that they run on the
    // device like the others instead of ending a batch of launches on the
    // host's side.
    SmallVector<memref::CopyOp> copies;
    module.walk([&](memref::CopyOp copy) {
      if (!copy->getParentOfType<gpu::GPUModuleOp>())
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies)
      asElementWise(copy, allowed);
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (whyNotAKernel(op, allowed, minWork).empty())
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    MLIRContext *context = &getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(context));
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModule);
    if (!kernels) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      kernels = gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModule);
    }
    unsigned count = 0;
    for (linalg::LinalgOp op : ops) {
      std::string name;
      do
        name = "kernel_" + std::to_string(count++);
      while (kernels.lookupSymbol(name));
      KernelBuilder(op, kernels, workgroupSize, tileSize, name).build();
    }
  }
};

} // namespace
