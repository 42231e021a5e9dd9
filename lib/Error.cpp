//===- Error.cpp - the errors of libtract ---------------------------------===//

#include "lib/Error.h"

using namespace mlir;
using namespace mlir::tract::lib;

char DiagnosedError::ID = 0;

void DiagnosedError::log(llvm::raw_ostream &stream) const {
  llvm::StringRef caught = llvm::StringRef(diagnostics).rtrim('\n');
  stream << caught;
  if (!caught.empty() && !message.empty())
    stream << "\n";
  stream << message;
}

DiagnosticCapture::DiagnosticCapture(MLIRContext &context) : os(text) {
  handler = std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr, &context,
                                                         os);
}

DiagnosticCapture::~DiagnosticCapture() = default;

void DiagnosticCapture::flush() {
  if (echo && !text.empty())
    *echo << text;
  text.clear();
}

llvm::Error DiagnosticCapture::takeError(llvm::StringRef fallback) {
  std::string caught = std::move(text);
  text.clear();
  return llvm::make_error<DiagnosedError>(
      caught, caught.empty() ? fallback.str() : std::string());
}

llvm::Error DiagnosticCapture::wrap(llvm::Error error) {
  std::string caught = std::move(text);
  text.clear();
  std::string message = llvm::toString(std::move(error));
  return llvm::make_error<DiagnosedError>(caught, message);
}
