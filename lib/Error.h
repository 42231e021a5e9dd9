//===- Error.h - the errors of libtract -------------------------*- C++ -*-===//
//
// libtract's steps fail with an llvm::Error whose message names the model
// element. A plain error is one line (makeError). A step that runs MLIR
// (import, passes, lowering) fails with a DiagnosedError: the diagnostics
// MLIR emitted, formatted as `tract` prints them (`model.onnx:0:0: error:
// ...`), and possibly a closing line of its own.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_ERROR_H
#define LIB_ERROR_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir::tract::lib {

/// One line, no error code. `tract` prints it after `tract: error:`.
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The diagnostics of a failed step (each line as `tract` prints it, the
/// last ending in a newline) and an optional line of its own.
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  DiagnosedError(std::string diagnostics, std::string message)
      : diagnostics(std::move(diagnostics)), message(std::move(message)) {}

  const std::string &getDiagnostics() const { return diagnostics; }
  const std::string &getMessage() const { return message; }

  /// Both, as one text without a final newline.
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string diagnostics;
  std::string message;
};

/// Catches the diagnostics of a context while a step runs. Warnings of a
/// step that succeeds go to the echo stream, when there is one.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(MLIRContext &context);
  ~DiagnosticCapture();

  void setEcho(llvm::raw_ostream *stream) { echo = stream; }
  llvm::raw_ostream *getEcho() const { return echo; }

  /// Forgets what was caught.
  void clear() { text.clear(); }
  /// After a step that succeeded: what was caught goes to the echo stream.
  void flush();
  /// After a step that failed: what was caught, and `fallback` when nothing
  /// was.
  llvm::Error takeError(llvm::StringRef fallback);
  /// After a step that failed with `error`: what was caught, then it.
  llvm::Error wrap(llvm::Error error);

private:
  std::string text;
  llvm::raw_string_ostream os;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;
  llvm::raw_ostream *echo = nullptr;
};

} // namespace mlir::tract::lib

#endif // LIB_ERROR_H
