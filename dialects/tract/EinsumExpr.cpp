//===- EinsumExpr.cpp - the parts of an einsum expression -----------------===//

#include "dialects/tract/EinsumExpr.h"


using namespace mlir::tract;

EinsumExpr EinsumExpr::parse(llvm::StringRef expr) {
  EinsumExpr parsed;
  auto [inputsPart, outputPart] = expr.split("->");
  llvm::SmallVector<llvm::StringRef> specs;
  inputsPart.split(specs, ',');
  std::map<char, int> occurrences;
  for (llvm::StringRef spec : specs) {
    parsed.inputs.push_back(spec.str());
    for (char letter : spec)
      ++occurrences[letter];
  }
  if (expr.contains("->")) {
    parsed.output = outputPart.str();
  } else {
    for (auto [letter, count] : occurrences)
      if (count == 1)
        parsed.output.push_back(letter);
  }
  return parsed;
}

std::string EinsumExpr::loopLetters() const {
  std::string letters = output;
  std::map<char, bool> summed;
  for (const std::string &spec : inputs)
    for (char letter : spec)
      if (!llvm::is_contained(output, letter))
        summed[letter] = true;
  for (auto [letter, unused] : summed)
    letters.push_back(letter);
  return letters;
}

bool EinsumExpr::hasSummedAxes() const {
  return loopLetters().size() > output.size();
}
