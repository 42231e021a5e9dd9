#ifndef TRACT_TARGET_PASSES_TD
#define TRACT_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def TractEntryChecks : Pass<"tract-entry-checks", "ModuleOp"> {
  let summary = "Check a lowered model's inputs before its body runs";
  let description = [{
    Runs after `tract-lower-to-linalg`, from what it recorded on each
    public function. Each public function `f` becomes `f.body` (private)
    behind a new public `f` that takes its tensors with every dim dynamic,
    checks each input dim against its expression, the module's assertions
    and scenarios over the bound symbols, and the intermediate dims and
    sizes the lowering recorded, and calls the body only if all hold. It
    returns the results (empty ones after a failed check) and an i32
    status: 0, or 1 with the first failed check's message recorded by the
    runtime's `tract_set_error`.
  }];
  let options = [
    Option<"bodyMayFail", "body-may-fail", "bool", /*default=*/"false",
           "The body's status comes from the runtime's tract_take_failure "
           "even if nothing in it calls tract_fail yet (the GPU launches, "
           "added later, do)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

def TractUseRuntimeBuffers : Pass<"tract-use-runtime-buffers", "ModuleOp"> {
  let summary = "Allocate memrefs from the runtime's buffer pool";
  let description = [{
    Runs after `finalize-memref-to-llvm` with `use-generic-functions`: the
    calls it made to `_mlir_memref_to_llvm_aligned_alloc(alignment, size)`
    and `_mlir_memref_to_llvm_free(ptr)` become calls to the runtime's
    `tract_buffer_aligned_alloc` and `tract_buffer_free`
    (`runtime/tract_runtime.h`), which keep freed buffers for the next run
    instead of giving their pages back to the system. Tensors the runtime
    makes come from the same pool, so a result buffer can become an output
    tensor as it is. An unaligned `_mlir_memref_to_llvm_alloc` is refused:
    the pipeline allocates with an alignment.
  }];
}

def TractInstrumentProfile : Pass<"tract-instrument-profile", "ModuleOp"> {
  let summary = "Time each op of the entry function with runtime calls";
  let description = [{
    Surrounds each op of the entry function's body with
    `func.call @tract_profile_enter(slot)` before it and
    `func.call @tract_profile_exit(slot)` after it, where `slot` (an `i64`)
    is the op's position in the body, terminator excluded: the numbering of
    `tract dump` after the inputs. The runtime (`runtime/tract_profile.h`)
    accumulates the time between the two calls per slot. The calls have side
    effects, so the op's lowered computation stays between them through
    bufferization and the LLVM lowering. Only top-level ops are
    instrumented: the body of a scan or an if counts in its op.

    ```mlir
    %c3 = arith.constant 3 : i64
    func.call @tract_profile_enter(%c3) : (i64) -> ()
    %4 = tract.sigmoid %3 : tensor<1x?x4xf32, #tract.dims<[S]>>
    func.call @tract_profile_exit(%c3) : (i64) -> ()
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"",
           "the function to instrument">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"
  ];
}

#endif // TRACT_TARGET_PASSES_TD
