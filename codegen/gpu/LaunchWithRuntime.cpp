//===- LaunchWithRuntime.cpp - the tract-gpu-launch-with-runtime pass -----===//
//
// The host's side of the kernels: the SPIR-V of each kernel module as
// constant words, and each launch as a call of the GPU runtime with the
// buffers' pointers, sizes and uses.
//
//===----------------------------------------------------------------------===//

#include "codegen/gpu/Passes.h"

#include "codegen/gpu/Msl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTGPULAUNCHWITHRUNTIME
#include "codegen/gpu/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kRecordName = "tract_gpu_record";
constexpr llvm::StringLiteral kSyncName = "tract_gpu_sync";
constexpr llvm::StringLiteral kCudaRecordName = "tract_cuda_record";
constexpr llvm::StringLiteral kCudaSyncName = "tract_cuda_sync";
constexpr llvm::StringLiteral kDiscardName = "tract_gpu_discard";
constexpr llvm::StringLiteral kCudaDiscardName = "tract_cuda_discard";
constexpr llvm::StringLiteral kMetalLaunchName = "tract_metal_launch";
constexpr llvm::StringLiteral kFailName = "tract_fail";
constexpr llvm::StringLiteral kLastErrorName = "tract_last_error";

/// The runtime function `name` of `type`, declared once.
LLVM::LLVMFuncOp declare(ModuleOp module, StringRef name,
                         LLVM::LLVMFunctionType type) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// A constant global of `module` named after `base`, unused so far.
LLVM::GlobalOp addGlobal(ModuleOp module, const std::string &base, Type type,
                         Attribute value) {
  std::string name = base;
  for (unsigned i = 1; module.lookupSymbol(name); ++i)
    name = base + "." + std::to_string(i);
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::GlobalOp::create(b, module.getLoc(), type,
                                /*isConstant=*/true, LLVM::Linkage::Internal,
                                name, value);
}

/// A NUL-terminated string global.
LLVM::GlobalOp addString(ModuleOp module, const std::string &base,
                         StringRef text) {
  std::string data = text.str();
  data.push_back('\0');
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(module.getContext(), 8),
                                       data.size());
  return addGlobal(module, base, type,
                   StringAttr::get(module.getContext(), data));
}

/// Groups the Vulkan and CUDA launches into batches: a batch runs (tract_gpu_sync)
/// before the first host op that may touch memory its launches use, so
/// that launches with only their own preparation between them (index
/// arithmetic, views, parameter stores, allocations) run together. The
/// host freeing a buffer the batch writes does not end it: `discard`
/// tells the runtime, before the free, that what the batch wrote there is
/// dead (nothing to copy back), or returns false where it cannot say which
/// bytes those are, and the batch runs first.
class Batcher {
public:
  Batcher(function_ref<void(OpBuilder &, Location)> sync,
          function_ref<bool(memref::DeallocOp)> discard)
      : sync(sync), discard(discard) {}

  /// Places the syncs of `block`'s launches; a block ends with none open.
  void place(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      // Nothing stays open past the block (a loop's next iteration, the
      // code after an if).
      if (op.hasTrait<OpTrait::IsTerminator>()) {
        close(&op);
        continue;
      }
      SmallVector<gpu::LaunchFuncOp> launches;
      if (leavesMemoryAlone(&op, launches)) {
        for (gpu::LaunchFuncOp launch : launches)
          open(launch);
        continue;
      }
      // Freeing what the batch only reads is harmless: it was copied. What
      // it writes is dead once freed.
      if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
        if (!written.contains(tract::viewedBuffer(dealloc.getMemref())) ||
            discard(dealloc))
          continue;
      close(&op);
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          Batcher(sync, discard).place(nested);
    }
  }

private:
  void open(gpu::LaunchFuncOp launch) {
    pending = true;
    auto uses =
        launch->getAttrOfType<DenseI32ArrayAttr>(tract::kBufferUsesAttrName);
    for (auto [index, operand] : llvm::enumerate(launch.getKernelOperands()))
      if (!uses || index >= static_cast<size_t>(uses.size()) ||
          (uses[index] & tract::kBufferWritten))
        written.insert(tract::viewedBuffer(operand));
  }

  /// The open batch runs before `op`.
  void close(Operation *op) {
    if (!pending)
      return;
    OpBuilder b(op);
    sync(b, op->getLoc());
    pending = false;
    written.clear();
  }

  /// Whether `op` touches no memory a launch uses: a launch itself (which
  /// goes to `launches`), a pure op, a store of parameters, an allocation,
  /// and a scf.if of such ops.
  static bool leavesMemoryAlone(Operation *op,
                                SmallVectorImpl<gpu::LaunchFuncOp> &launches) {
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      launches.push_back(launch);
      return true;
    }
    if (isa<scf::IfOp>(op)) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Operation &nested : block)
            if (!leavesMemoryAlone(&nested, launches))
              return false;
      return true;
    }
    if (op->getNumRegions())
      return false;
    if (isa<scf::YieldOp>(op) || isPure(op))
      return true;
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      auto table = tract::viewedBuffer(store.getMemref())
                       .getDefiningOp<memref::AllocaOp>();
      return table && table->hasAttr(tract::kParametersAttrName);
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    return effects && effects.hasEffect<MemoryEffects::Allocate>() &&
           !effects.hasEffect<MemoryEffects::Read>() &&
           !effects.hasEffect<MemoryEffects::Write>() &&
           !effects.hasEffect<MemoryEffects::Free>();
  }

  function_ref<void(OpBuilder &, Location)> sync;
  function_ref<bool(memref::DeallocOp)> discard;
  bool pending = false;
  /// The buffers the open batch's launches write.
  llvm::DenseSet<Value> written;
};

} // namespace

Value tract::viewedBuffer(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(op))
      value = metadata.getSource();
    else if (auto cast = dyn_cast<memref::CastOp>(op))
      value = cast.getSource();
    else if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      value = view.getViewSource();
    else
      break;
  }
  return value;
}

namespace {

struct TractGpuLaunchWithRuntimePass
    : public tract::impl::TractGpuLaunchWithRuntimeBase<
          TractGpuLaunchWithRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (api != "vulkan" && api != "cuda" && api != "metal") {
      module.emitError() << "unknown GPU API '" << api << "'";
      return signalPassFailure();
    }
    // The code of each kernel module (SPIR-V words, or PTX text), or for
    // Metal of each kernel (MSL text, under "<module>.<kernel>").
    llvm::StringMap<Code> codes;
    for (auto shader : llvm::make_early_inc_range(
             module.getBody()->getOps<spirv::ModuleOp>())) {
      if (failed(api == "metal" ? addMsl(shader, codes)
                                : addSpirv(shader, codes)))
        return signalPassFailure();
      shader.erase();
    }
    for (auto binary : llvm::make_early_inc_range(
             module.getBody()->getOps<gpu::BinaryOp>())) {
      if (failed(addPtx(binary, codes)))
        return signalPassFailure();
      binary.erase();
    }

    // Vulkan and CUDA batch the launches; Metal runs each at once.
    if (api != "metal")
      for (auto function : module.getOps<FunctionOpInterface>())
        if (!function.isExternal())
          for (Block &block : function.getFunctionBody())
            Batcher([&](OpBuilder &b,
                        Location loc) { addSync(b, loc); },
                    [&](memref::DeallocOp dealloc) {
                      return addDiscard(dealloc);
                    })
                .place(block);
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches)
      if (failed(lower(launch, codes)))
        return signalPassFailure();
    for (auto kernels :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
      kernels.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  /// A kernel module's code in the host's constants, and its size (words
  /// of SPIR-V, bytes of PTX or MSL without the NUL); for MSL, the name of
  /// the kernel function there.
  struct Code {
    LLVM::GlobalOp global;
    int64_t size;
    std::string entry = "";
  };

  /// The words of `shader`, serialized.
  FailureOr<SmallVector<uint32_t>> serialize(spirv::ModuleOp shader) {
    SmallVector<uint32_t> words;
    if (failed(spirv::serialize(shader, words)))
      return shader.emitError() << "cannot serialize the SPIR-V module";
    return words;
  }

  /// The gpu.module the SPIR-V module `shader` was converted from.
  gpu::GPUModuleOp kernelsOf(spirv::ModuleOp shader) {
    StringRef name = shader.getName().value_or("kernels");
    name.consume_front("__spv__");
    return getOperation().lookupSymbol<gpu::GPUModuleOp>(name);
  }

  /// The MSL of each kernel of `shader`, NUL-terminated for Metal's
  /// newLibraryWithSource, and the files asked for.
  LogicalResult addMsl(spirv::ModuleOp shader, llvm::StringMap<Code> &codes) {
    FailureOr<SmallVector<uint32_t>> words = serialize(shader);
    if (failed(words))
      return failure();
    gpu::GPUModuleOp kernels = kernelsOf(shader);
    if (!kernels)
      return shader.emitError() << "no gpu.module for this SPIR-V module";
    for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
      std::string key = (kernels.getName() + "." + kernel.getName()).str();
      llvm::Expected<tract::MslKernel> msl = tract::translateToMsl(
          *words, kernel.getName(), kernel.getNumArguments());
      if (!msl)
        return kernel.emitError() << "no MSL: " << toString(msl.takeError());
      codes[key] = {addString(getOperation(), key + ".metal", msl->source),
                    static_cast<int64_t>(msl->source.size()), msl->entry};
      if (!mslDir.empty() &&
          failed(
              write(shader, mslDir, kernel.getName() + ".metal", msl->source)))
        return failure();
    }
    return success();
  }

  /// The SPIR-V words of `shader`, and the files asked for.
  LogicalResult addSpirv(spirv::ModuleOp shader, llvm::StringMap<Code> &codes) {
    FailureOr<SmallVector<uint32_t>> serialized = serialize(shader);
    if (failed(serialized))
      return failure();
    ArrayRef<uint32_t> words = *serialized;
    StringRef name = shader.getName().value_or("kernels");
    name.consume_front("__spv__");
    SmallVector<int32_t> signedWords(words.begin(), words.end());
    auto type = RankedTensorType::get({static_cast<int64_t>(words.size())},
                                      IntegerType::get(&getContext(), 32));
    codes[name] = {
        addGlobal(
            getOperation(), name.str() + ".spirv",
            LLVM::LLVMArrayType::get(IntegerType::get(&getContext(), 32),
                                     words.size()),
            DenseIntElementsAttr::get(type, ArrayRef<int32_t>(signedWords))),
        static_cast<int64_t>(words.size())};
    if (!spirvDir.empty() &&
        failed(write(shader, spirvDir, name + ".spv",
                     StringRef(reinterpret_cast<const char *>(words.data()),
                               words.size() * sizeof(uint32_t)))))
      return failure();
    if (!mslDir.empty() && failed(writeMsl(shader, name, words)))
      return failure();
    return success();
  }

  /// The PTX of `binary` (gpu-module-to-binary's assembly for an NVVM
  /// target), NUL-terminated as the driver reads it.
  LogicalResult addPtx(gpu::BinaryOp binary, llvm::StringMap<Code> &codes) {
    auto objects = binary.getObjects();
    auto object = objects.empty() ? gpu::ObjectAttr()
                                  : dyn_cast<gpu::ObjectAttr>(objects[0]);
    if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
      return binary.emitError() << "expected one PTX object";
    StringRef ptx = object.getObject().getValue();
    StringRef name = binary.getName();
    // Math from libdevice, which only a CUDA toolkit has, left unlinked:
    // the driver could not load the module.
    size_t external = ptx.find(".extern .func");
    if (external != StringRef::npos) {
      size_t call = ptx.find("__nv_", external);
      StringRef function = call == StringRef::npos
                               ? StringRef("a function")
                               : ptx.substr(call).take_while([](char c) {
                                   return llvm::isAlnum(c) || c == '_';
                                 });
      return binary.emitError()
             << "the kernels call " << function
             << " from libdevice, which needs a CUDA toolkit: give "
                "--cuda-path or set CUDA_HOME";
    }
    if (!ptxDir.empty() && failed(write(binary, ptxDir, name + ".ptx", ptx)))
      return failure();
    if (cudaToolkit.empty()) {
      codes[name] = {addString(getOperation(), name.str() + ".ptx", ptx),
                     static_cast<int64_t>(ptx.size())};
      return success();
    }
    FailureOr<std::string> fatbin = assemble(binary, ptx);
    if (failed(fatbin))
      return failure();
    LLVM::GlobalOp global =
        addString(getOperation(), name.str() + ".fatbin", *fatbin);
    // As the CUDA toolkit's compilers place fatbins.
    global.setAlignment(16);
    codes[name] = {global, static_cast<int64_t>(fatbin->size())};
    return success();
  }

  /// The fatbin of `ptx`: the cubin the toolkit's ptxas makes for the chip
  /// of its `.target`, and the PTX itself, which the driver compiles on
  /// chips the cubin cannot run on.
  FailureOr<std::string> assemble(gpu::BinaryOp binary, StringRef ptx) {
    size_t target = ptx.find(".target sm_");
    if (target == StringRef::npos)
      return binary.emitError() << "the PTX names no sm_ target";
    StringRef chip =
        ptx.substr(target + strlen(".target ")).take_while([](char c) {
          return llvm::isAlnum(c) || c == '_';
        });
    StringRef sm = chip.drop_front(strlen("sm_"));
    llvm::SmallString<128> ptxas(cudaToolkit), fatbinary(cudaToolkit);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    llvm::sys::path::append(fatbinary, "bin", "fatbinary");
    // Files for the tools, removed whatever happens.
    llvm::SmallString<128> ptxFile, cubinFile, fatbinFile, logFile;
    for (auto [path, suffix] : {std::pair{&ptxFile, "ptx"},
                                {&cubinFile, "cubin"},
                                {&fatbinFile, "fatbin"},
                                {&logFile, "log"}})
      if (std::error_code error = llvm::sys::fs::createTemporaryFile(
              "tract-kernels", suffix, *path))
        return binary.emitError()
               << "cannot create a temporary file: " << error.message();
    llvm::FileRemover removers[] = {
        llvm::FileRemover(ptxFile), llvm::FileRemover(cubinFile),
        llvm::FileRemover(fatbinFile), llvm::FileRemover(logFile)};
    {
      std::error_code error;
      llvm::raw_fd_ostream os(ptxFile, error);
      if (error)
        return binary.emitError()
               << "cannot write " << ptxFile << ": " << error.message();
      os << ptx;
    }
    std::string cubinImage =
        ("--image3=kind=elf,sm=" + sm + ",file=" + cubinFile).str();
    std::string ptxImage =
        ("--image3=kind=ptx,sm=" + sm + ",file=" + ptxFile).str();
    std::string created = ("--create=" + fatbinFile).str();
    if (failed(run(binary, ptxas,
                   {ptxas, "--gpu-name", chip, ptxFile, "-o", cubinFile},
                   logFile)) ||
        failed(run(binary, fatbinary,
                   {fatbinary, "-64", created, cubinImage, ptxImage}, logFile)))
      return failure();
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> fatbin =
        llvm::MemoryBuffer::getFile(fatbinFile, /*IsText=*/false);
    if (!fatbin)
      return binary.emitError()
             << "cannot read the fatbin: " << fatbin.getError().message();
    return (*fatbin)->getBuffer().str();
  }

  /// Runs the toolkit's `program`; when it fails, the error quotes the
  /// first line of what it said (to `logFile`).
  LogicalResult run(gpu::BinaryOp binary, StringRef program,
                    ArrayRef<StringRef> arguments, StringRef logFile) {
    std::optional<StringRef> redirects[] = {std::nullopt, logFile, logFile};
    std::string message;
    int status = llvm::sys::ExecuteAndWait(program, arguments, std::nullopt,
                                           redirects, 0, 0, &message);
    if (status == 0)
      return success();
    StringRef name = llvm::sys::path::filename(program);
    auto log = llvm::MemoryBuffer::getFile(logFile, /*IsText=*/true);
    StringRef said = log ? (*log)->getBuffer().trim() : StringRef();
    return binary.emitError()
           << name << " failed"
           << (said.empty() ? (message.empty() ? "" : ": " + message)
                            : ": " + said.split('\n').first.str());
  }

  /// The MSL of each kernel of the gpu.module `name`, to
  /// `<msl-dir>/<kernel>.metal`.
  LogicalResult writeMsl(spirv::ModuleOp shader, StringRef name,
                         ArrayRef<uint32_t> words) {
    gpu::GPUModuleOp kernels = kernelsOf(shader);
    if (!kernels)
      return shader.emitError() << "no gpu.module '" << name << "'";
    for (auto kernel : kernels.getOps<gpu::GPUFuncOp>()) {
      llvm::Expected<tract::MslKernel> msl = tract::translateToMsl(
          words, kernel.getName(), kernel.getNumArguments());
      if (!msl)
        return kernel.emitError() << "no MSL: " << toString(msl.takeError());
      if (failed(
              write(shader, mslDir, kernel.getName() + ".metal", msl->source)))
        return failure();
    }
    return success();
  }

  /// Writes `data` to `<folder>/<file>`; errors go to `shader`.
  LogicalResult write(Operation *shader, StringRef folder, const Twine &file,
                      StringRef data) {
    llvm::SmallString<128> path(folder);
    if (std::error_code error = llvm::sys::fs::create_directories(path))
      return shader->emitError()
             << "cannot create " << path << ": " << error.message();
    llvm::sys::path::append(path, file);
    std::error_code error;
    llvm::raw_fd_ostream os(path, error);
    if (error)
      return shader->emitError()
             << "cannot write " << path << ": " << error.message();
    os << data;
    return success();
  }

  /// A call of tract_gpu_sync (tract_cuda_sync) at `b`, which fails the
  /// run when it fails.
  void addSync(OpBuilder &b, Location loc) {
    Type i32 = b.getI32Type();
    LLVM::LLVMFuncOp syncFunction =
        declare(getOperation(), api == "cuda" ? kCudaSyncName : kSyncName,
                LLVM::LLVMFunctionType::get(i32, {}));
    Value status =
        LLVM::CallOp::create(b, loc, syncFunction, ValueRange{}).getResult();
    failWith(b, loc, status, "the GPU kernels failed: %s", "tract_gpu.failed");
  }

  /// A call of tract_gpu_discard (tract_cuda_discard) before `dealloc`,
  /// on the bytes of its buffer: an identity-layout memref of ints or
  /// floats, the launches' flat views of which start at its aligned
  /// pointer. False (and nothing made) for any other.
  bool addDiscard(memref::DeallocOp dealloc) {
    Value buffer = dealloc.getMemref();
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || !type.getLayout().isIdentity() ||
        !type.getElementType().isIntOrFloat())
      return false;
    OpBuilder b(dealloc);
    Location loc = dealloc.getLoc();
    Type i64 = b.getI64Type();
    auto pointer = LLVM::LLVMPointerType::get(&getContext());
    int64_t elementBytes = std::max<int64_t>(
        1, (type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
    Value bytes = arith::ConstantIntOp::create(b, loc, i64, elementBytes);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      Value extent = arith::IndexCastOp::create(
          b, loc, i64, memref::DimOp::create(b, loc, buffer, d));
      bytes = arith::MulIOp::create(b, loc, bytes, extent);
    }
    Value address = arith::IndexCastOp::create(
        b, loc, i64,
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer));
    Value base = LLVM::IntToPtrOp::create(b, loc, pointer, address);
    LLVM::LLVMFuncOp function = declare(
        getOperation(), api == "cuda" ? kCudaDiscardName : kDiscardName,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(&getContext()),
                                    {pointer, i64}));
    LLVM::CallOp::create(b, loc, function, ValueRange{base, bytes});
    return true;
  }

  /// When `status` is not 0, tract_fail with `format` and the runtime's
  /// reason (the format a global named `name`).
  void failWith(OpBuilder &b, Location loc, Value status, StringRef format,
                StringRef name) {
    ModuleOp module = getOperation();
    Type i32 = b.getI32Type();
    auto pointer = LLVM::LLVMPointerType::get(&getContext());
    Value failed =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, status,
                              arith::ConstantIntOp::create(b, loc, i32, 0));
    auto report = scf::IfOp::create(b, loc, failed, /*withElseRegion=*/false);
    OpBuilder then = report.getThenBodyBuilder();
    LLVM::LLVMFuncOp lastError = declare(
        module, kLastErrorName, LLVM::LLVMFunctionType::get(pointer, {}));
    LLVM::LLVMFuncOp fail =
        declare(module, kFailName,
                LLVM::LLVMFunctionType::get(i32, {pointer}, /*isVarArg=*/true));
    auto message = module.lookupSymbol<LLVM::GlobalOp>(name);
    if (!message)
      message = addString(module, name.str(), format);
    Value reason =
        LLVM::CallOp::create(then, loc, lastError, ValueRange{}).getResult();
    LLVM::CallOp::create(
        then, loc, fail,
        ValueRange{LLVM::AddressOfOp::create(then, loc, message), reason});
  }

  LogicalResult lower(gpu::LaunchFuncOp launch,
                      const llvm::StringMap<Code> &codes) {
    auto module = launch->getParentOfType<ModuleOp>();
    MLIRContext *context = &getContext();
    Location loc = launch.getLoc();
    StringRef moduleName = launch.getKernelModuleName().getValue();
    StringRef kernelName = launch.getKernelName().getValue();
    bool metal = api == "metal";
    auto code = codes.find(metal ? (moduleName + "." + kernelName).str()
                                 : moduleName.str());
    auto uses =
        launch->getAttrOfType<DenseI32ArrayAttr>(tract::kBufferUsesAttrName);
    if (code == codes.end())
      return launch.emitError() << "no code for kernel " << launch.getKernel();
    if (!uses ||
        uses.size() != static_cast<int64_t>(launch.getKernelOperands().size()))
      return launch.emitError() << "expected '" << tract::kBufferUsesAttrName
                                << "' with a use per buffer";
    // CUDA and Metal take the block size, which their kernels leave to
    // the launch.
    bool withBlock = api == "cuda" || metal;

    Type i32 = IntegerType::get(context, 32);
    Type i64 = IntegerType::get(context, 64);
    auto pointer = LLVM::LLVMPointerType::get(context);
    // The same call for every runtime, but for the block size.
    SmallVector<Type> parameterTypes = {pointer, i64, pointer, i32, i32, i32};
    if (withBlock)
      parameterTypes.push_back(i32);
    parameterTypes.append({i32, pointer, pointer, pointer});
    LLVM::LLVMFuncOp launchFunction =
        declare(module,
                metal           ? kMetalLaunchName
                : api == "cuda" ? kCudaRecordName
                                : kRecordName,
                LLVM::LLVMFunctionType::get(i32, parameterTypes));
    // Three arrays on the caller's stack, allocated once at its entry.
    auto caller = launch->getParentOfType<FunctionOpInterface>();
    OpBuilder entry =
        OpBuilder::atBlockBegin(&caller.getFunctionBody().front());
    unsigned count = launch.getKernelOperands().size();
    Value slots = LLVM::ConstantOp::create(entry, loc, i64, count);
    Value pointers =
        LLVM::AllocaOp::create(entry, loc, pointer, pointer, slots);
    Value sizes = LLVM::AllocaOp::create(entry, loc, pointer, i64, slots);
    Value flags = LLVM::AllocaOp::create(entry, loc, pointer, i32, slots);

    OpBuilder b(launch);
    for (auto [index, operand] : llvm::enumerate(launch.getKernelOperands())) {
      auto type = dyn_cast<MemRefType>(operand.getType());
      if (!type || type.getRank() != 1)
        return launch.emitError()
               << "kernel operand " << index
               << " is not a flat buffer: " << operand.getType();
      Value address =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, operand);
      Value address64 =
          arith::IndexCastOp::create(b, loc, i64, address).getResult();
      Value base = LLVM::IntToPtrOp::create(b, loc, pointer, address64);
      Type element = type.getElementType();
      int64_t elementBytes =
          std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
      Value elements = arith::IndexCastOp::create(
          b, loc, i64, memref::DimOp::create(b, loc, operand, 0));
      Value bytes = arith::MulIOp::create(
          b, loc, elements,
          arith::ConstantIntOp::create(b, loc, i64, elementBytes));
      int32_t use = uses[index];
      int32_t position = index;
      auto slot = [&](Value array, Type elementType) {
        return LLVM::GEPOp::create(b, loc, pointer, elementType, array,
                                   ArrayRef<LLVM::GEPArg>{position});
      };
      LLVM::StoreOp::create(b, loc, base, slot(pointers, pointer));
      LLVM::StoreOp::create(b, loc, bytes, slot(sizes, i64));
      LLVM::StoreOp::create(b, loc,
                            arith::ConstantIntOp::create(b, loc, i32, use),
                            slot(flags, i32));
    }
    auto toI32 = [&](Value value) -> Value {
      return arith::IndexCastOp::create(b, loc, i32, value);
    };
    LLVM::GlobalOp entryName = addString(
        module, (moduleName + "." + kernelName + ".name").str(),
        code->second.entry.empty() ? kernelName.str() : code->second.entry);
    SmallVector<Value> arguments = {
        LLVM::AddressOfOp::create(b, loc, code->second.global),
        arith::ConstantIntOp::create(b, loc, i64, code->second.size),
        LLVM::AddressOfOp::create(b, loc, entryName),
        toI32(launch.getGridSizeX()),
        toI32(launch.getGridSizeY()),
        toI32(launch.getGridSizeZ())};
    if (withBlock)
      arguments.push_back(toI32(launch.getBlockSizeX()));
    arguments.append({arith::ConstantIntOp::create(b, loc, i32, count),
                      pointers, sizes, flags});
    Value status =
        LLVM::CallOp::create(b, loc, launchFunction, arguments).getResult();
    // A failed launch fails the run, with the runtime's reason.
    failWith(b, loc, status,
             ("the GPU kernel " + kernelName + " failed: %s").str(),
             (moduleName + "." + kernelName + ".failed").str());
    launch.erase();
    return success();
  }
};

} // namespace
