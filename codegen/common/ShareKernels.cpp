//===- ShareKernels.cpp - one function for each kind of repeated kernel ---===//
//
// See TractShareKernels in codegen/Passes.td: top-level ops with regions
// that are the same up to the values they take from outside become calls
// to one private function.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tract {
#define GEN_PASS_DEF_TRACTSHAREKERNELS
#include "codegen/Passes.h.inc"
} // namespace mlir::tract

using namespace mlir;

namespace {

/// Constants a kernel clones rather than takes as an argument: what they
/// are is part of the kernel (a bound, an offset, a padding value).
bool isClonable(Operation *op) {
  return op && op->getNumRegions() == 0 && op->getNumOperands() == 0 &&
         op->hasTrait<OpTrait::ConstantLike>();
}

/// What makes two ops one kernel: a sequence of tokens (op names,
/// attributes and types, which the context uniques, so pointers compare
/// them; and small numbers for the values' places) that is the same for
/// two ops exactly when one is the other with other values from outside
/// (given in the same pattern: a value taken twice by one is taken twice
/// by the other).
struct Fingerprint {
  SmallVector<const void *> tokens;
  /// The values from outside, in order of first use.
  llvm::SetVector<Value> captured;
  /// The constants from outside.
  llvm::SetVector<Operation *> constants;
  /// The globals read, when they are arguments.
  SmallVector<memref::GetGlobalOp> globals;
  int64_t ops = 0;
  bool shareable = true;
};

enum class Token : uintptr_t {
  Op = 1,
  Local,
  Captured,
  Constant,
  Global,
  Region,
  Block
};

class Fingerprinter {
public:
  explicit Fingerprinter(Fingerprint &print) : print(print) {}

  void visit(Operation *op) {
    ++print.ops;
    // A weight: which one is an argument of the shared function.
    if (auto global = dyn_cast<memref::GetGlobalOp>(op);
        global && globalsAsArguments) {
      print.globals.push_back(global);
      add(Token::Global);
      define(global.getResult());
      return;
    }
    // A stack allocation that one of its results lets out would not
    // outlive the call.
    if (isa<memref::AllocaOp>(op))
      hasAlloca = true;
    add(Token::Op);
    add(op->getName().getAsOpaquePointer());
    add(op->getRawDictionaryAttrs().getAsOpaquePointer());
    add(op->getPropertiesAsAttribute().getAsOpaquePointer());
    add(op->getNumOperands());
    for (Value operand : op->getOperands())
      visitOperand(operand);
    add(op->getNumResults());
    for (Value result : op->getResults())
      define(result);
    add(op->getNumSuccessors());
    for (Block *successor : op->getSuccessors())
      add(blockNumbers.lookup(successor));
    add(op->getNumRegions());
    for (Region &region : op->getRegions()) {
      add(Token::Region);
      for (Block &block : region)
        blockNumbers.try_emplace(&block, blockNumbers.size());
      for (Block &block : region) {
        add(Token::Block);
        add(block.getNumArguments());
        for (BlockArgument argument : block.getArguments())
          define(argument);
        for (Operation &nested : block)
          visit(&nested);
      }
    }
  }

  /// The body of `function`, after its type.
  void visitBody(func::FuncOp function) {
    add(function.getFunctionType().getAsOpaquePointer());
    Block &body = function.getBody().front();
    for (BlockArgument argument : body.getArguments())
      define(argument);
    for (Operation &op : body)
      visit(&op);
  }

  bool hasAlloca = false;
  /// Whether `memref.get_global` ops are told apart by their type only.
  bool globalsAsArguments = false;

private:
  void add(Token token) { print.tokens.push_back(
      reinterpret_cast<const void *>(static_cast<uintptr_t>(token))); }
  void add(size_t number) {
    print.tokens.push_back(reinterpret_cast<const void *>(number));
  }
  void add(const void *pointer) { print.tokens.push_back(pointer); }

  void define(Value value) {
    add(value.getType().getAsOpaquePointer());
    locals.try_emplace(value, locals.size());
  }

  void visitOperand(Value operand) {
    if (auto local = locals.find(operand); local != locals.end()) {
      add(Token::Local);
      add(static_cast<size_t>(local->second));
      return;
    }
    Operation *definer = operand.getDefiningOp();
    if (isClonable(definer)) {
      print.constants.insert(definer);
      add(Token::Constant);
      add(definer->getName().getAsOpaquePointer());
      add(definer->getPropertiesAsAttribute().getAsOpaquePointer());
      add(definer->getRawDictionaryAttrs().getAsOpaquePointer());
      add(operand.getType().getAsOpaquePointer());
      add(static_cast<size_t>(cast<OpResult>(operand).getResultNumber()));
      return;
    }
    auto [place, added] =
        capturePlaces.try_emplace(operand, print.captured.size());
    if (added)
      print.captured.insert(operand);
    add(Token::Captured);
    add(static_cast<size_t>(place->second));
    add(operand.getType().getAsOpaquePointer());
  }

  Fingerprint &print;
  llvm::DenseMap<Value, size_t> locals;
  llvm::DenseMap<Value, size_t> capturePlaces;
  llvm::DenseMap<Block *, size_t> blockNumbers;
};

Fingerprint fingerprint(Operation *op) {
  Fingerprint print;
  Fingerprinter visitor(print);
  visitor.visit(op);
  bool letsStackOut = visitor.hasAlloca &&
                      llvm::any_of(op->getResultTypes(), [](Type type) {
                        return isa<BaseMemRefType>(type);
                      });
  print.shareable = !letsStackOut;
  return print;
}

/// Replaces the private functions of `module` that differ only in the
/// globals they read (steps that run the same shared kernels on other
/// weights) by the first of them, which takes those globals as arguments.
void shareFunctions(ModuleOp module) {
  SymbolTable symbols(module);
  std::vector<std::pair<func::FuncOp, Fingerprint>> candidates;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (!function.isPrivate() || function.isExternal() ||
        !function.getBody().hasOneBlock() || function.getArgAttrs() ||
        function.getResAttrs() || !function->getDiscardableAttrs().empty())
      continue;
    Fingerprint print;
    Fingerprinter visitor(print);
    visitor.globalsAsArguments = true;
    visitor.visitBody(function);
    candidates.emplace_back(function, std::move(print));
  }
  llvm::DenseMap<ArrayRef<const void *>, SmallVector<size_t>> kinds;
  for (auto [index, candidate] : llvm::enumerate(candidates))
    kinds[ArrayRef<const void *>(candidate.second.tokens)].push_back(index);

  for (auto [index, candidate] : llvm::enumerate(candidates)) {
    SmallVector<size_t> &members =
        kinds[ArrayRef<const void *>(candidate.second.tokens)];
    if (members.size() < 2 || members.front() != index)
      continue;
    // Every use a call: the calls then pass the globals.
    SmallVector<std::pair<size_t, func::CallOp>> calls;
    bool onlyCalled = true;
    for (size_t member : members) {
      auto uses = SymbolTable::getSymbolUses(candidates[member].first, module);
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto call = dyn_cast<func::CallOp>(use.getUser());
        onlyCalled &= call != nullptr;
        if (call)
          calls.emplace_back(member, call);
      }
    }
    if (!onlyCalled)
      continue;
    // Each one's globals, before the first's become arguments.
    llvm::DenseMap<size_t, SmallVector<std::pair<MemRefType, FlatSymbolRefAttr>>>
        globals;
    for (size_t member : members)
      for (memref::GetGlobalOp global : candidates[member].second.globals)
        globals[member].emplace_back(global.getType(), global.getNameAttr());
    func::FuncOp shared = candidate.first;
    Fingerprint &print = candidate.second;
    Block &body = shared.getBody().front();
    for (memref::GetGlobalOp global : print.globals) {
      BlockArgument argument =
          body.addArgument(global.getType(), global.getLoc());
      global.getResult().replaceAllUsesWith(argument);
      global.erase();
    }
    shared.setFunctionType(FunctionType::get(
        module.getContext(), body.getArgumentTypes(),
        shared.getFunctionType().getResults()));
    for (auto [member, call] : calls) {
      OpBuilder builder(call);
      SmallVector<Value> operands(call.getOperands());
      for (auto [type, name] : globals[member])
        operands.push_back(memref::GetGlobalOp::create(builder, call.getLoc(),
                                                       type, name));
      auto replacement =
          func::CallOp::create(builder, call.getLoc(), shared, operands);
      call.replaceAllUsesWith(replacement.getResults());
      call.erase();
    }
    for (size_t member : members)
      if (member != index)
        candidates[member].first.erase();
  }
}

/// Makes the private function that runs `op` (the first of its kind),
/// taking `print`'s captured values as arguments.
func::FuncOp outlineKernel(Operation *op, const Fingerprint &print,
                           StringRef name, OpBuilder &builder,
                           SymbolTable &symbols, Location loc) {
  SmallVector<Type> inputs;
  for (Value value : print.captured)
    inputs.push_back(value.getType());
  auto kernel = func::FuncOp::create(
      builder, loc, name,
      builder.getFunctionType(inputs, op->getResultTypes()));
  kernel.setPrivate();
  symbols.insert(kernel);
  Block *body = kernel.addEntryBlock();
  OpBuilder inside = OpBuilder::atBlockBegin(body);
  IRMapping mapping;
  for (Operation *constant : print.constants)
    mapping.map(constant->getResults(), inside.clone(*constant)->getResults());
  for (auto [value, argument] : llvm::zip(print.captured, body->getArguments()))
    mapping.map(value, argument);
  Operation *copy = inside.clone(*op, mapping);
  func::ReturnOp::create(inside, loc, copy->getResults());
  return kernel;
}

struct TractShareKernels
    : public tract::impl::TractShareKernelsBase<TractShareKernels> {
  using TractShareKernelsBase::TractShareKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // The candidates of each kind, in program order, by their tokens.
    std::vector<std::pair<Operation *, Fingerprint>> candidates;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      for (Operation &op : function.getBody().front()) {
        if (op.getNumRegions() == 0 ||
            op.hasTrait<OpTrait::IsIsolatedFromAbove>())
          continue;
        Fingerprint print = fingerprint(&op);
        if (print.shareable && print.ops >= minOps)
          candidates.emplace_back(&op, std::move(print));
      }
    }
    llvm::DenseMap<ArrayRef<const void *>, SmallVector<size_t>> kinds;
    SmallVector<ArrayRef<const void *>> order;
    for (auto [index, candidate] : llvm::enumerate(candidates)) {
      auto [kind, inserted] = kinds.try_emplace(
          ArrayRef<const void *>(candidate.second.tokens));
      if (inserted)
        order.push_back(kind->first);
      kind->second.push_back(index);
    }

    OpBuilder builder(module.getContext());
    unsigned next = 0;
    for (ArrayRef<const void *> key : order) {
      SmallVector<size_t> &members = kinds[key];
      if (members.size() < 2)
        continue;
      auto &[first, firstPrint] = candidates[members.front()];
      auto parent = first->getParentOfType<func::FuncOp>();
      builder.setInsertionPoint(parent);
      func::FuncOp kernel =
          outlineKernel(first, firstPrint, "tract_kernel_" + std::to_string(next++),
                        builder, symbols, parent.getLoc());
      for (size_t member : members) {
        auto &[op, print] = candidates[member];
        builder.setInsertionPoint(op);
        auto call = func::CallOp::create(builder, op->getLoc(), kernel,
                                         print.captured.getArrayRef());
        op->replaceAllUsesWith(call.getResults());
        op->erase();
      }
    }
    shareFunctions(module);
  }
};

} // namespace
