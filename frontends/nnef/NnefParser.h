//===- NnefParser.h - NNEF 1.0 text to a syntax tree ------------*- C++ -*-===//

#ifndef FRONTENDS_NNEF_NNEFPARSER_H
#define FRONTENDS_NNEF_NNEFPARSER_H

#include "frontends/nnef/NnefAst.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::tract::nnef {

/// Parses an NNEF graph document. Without `requireGraph`, a list of fragment
/// declarations is accepted too (the signatures of the standard operations).
/// On failure returns nullopt and sets `error` and `errorPos`.
std::optional<Document> parseDocument(llvm::StringRef text, std::string &error,
                                      SourcePos &errorPos,
                                      bool requireGraph = true);

} // namespace mlir::tract::nnef

#endif // FRONTENDS_NNEF_NNEFPARSER_H
