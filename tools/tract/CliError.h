//===- CliError.h - the errors of tract's host-side steps -------*- C++ -*-===//

#ifndef TOOLS_TRACT_CLIERROR_H
#define TOOLS_TRACT_CLIERROR_H

#include "llvm/Support/Error.h"

namespace mlir::tract::cli {

/// An error of the tool's host-side steps (the command line, bundles,
/// streaming): one line, no error code. `tract` prints it after
/// `tract: error:`.
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace mlir::tract::cli

#endif // TOOLS_TRACT_CLIERROR_H
