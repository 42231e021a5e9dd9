//===- PackedEntry.h - the packed entry point of a compiled model -*- C++
//-*-===//
//
// Compiled models are called through one C signature, whatever their inputs:
// `int32_t <name>_invoke(void **args)`, which the runtime's tract_model_run
// calls. Object files (tract compile) and the JIT both define it this way.
//
//===----------------------------------------------------------------------===//

#ifndef TARGET_PACKEDENTRY_H
#define TARGET_PACKEDENTRY_H

#include "llvm/ADT/StringRef.h"

namespace llvm {
class Function;
class Module;
class Type;
} // namespace llvm

namespace mlir::tract {

/// Defines `int32_t <name>_invoke(void **args)`: loads each argument of the
/// C interface function `entry` from the slot args[i] points to, calls it
/// and returns the status the entry checks give: the last member of the
/// results struct `entry` writes (of the type `results`), or its return
/// value when the model has no outputs.
void addPackedEntry(llvm::Module &module, llvm::Function &entry,
                    llvm::Type *results, llvm::StringRef name);

} // namespace mlir::tract

#endif // TARGET_PACKEDENTRY_H
