//===- NnefParser.cpp - NNEF 1.0 text to a syntax tree --------------------===//
//
// A tokenizer and a recursive-descent parser for the NNEF 1.0 grammar:
// `version`, `extension` lines (kept as text, tract puts expressions in
// them), fragment declarations and definitions with generic `<?>` types and
// defaults, and the graph definition.
//
//===----------------------------------------------------------------------===//

#include "frontends/nnef/NnefParser.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir::tract::nnef;

namespace {

struct Token {
  enum class Kind { Identifier, Integer, Scalar, String, Punct, End };
  Kind kind;
  std::string text;
  SourcePos pos;
  size_t offset = 0; ///< in the source text
  size_t end = 0;
};

/// The first error wins.
class Parser {
public:
  explicit Parser(llvm::StringRef text) : source(text) {}

  std::optional<Document> parse(bool requireGraph);
  std::string error;
  SourcePos errorPos;

private:
  // Tokenizer.
  bool tokenize();
  // Helpers.
  const Token &peek(unsigned ahead = 0) const {
    return tokens[std::min(index + ahead, unsigned(tokens.size() - 1))];
  }
  const Token &next() {
    const Token &token = peek();
    if (index + 1 < tokens.size())
      ++index;
    return token;
  }
  bool isPunct(llvm::StringRef text, unsigned ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Punct && peek(ahead).text == text;
  }
  bool isKeyword(llvm::StringRef text, unsigned ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Identifier &&
           peek(ahead).text == text;
  }
  bool consumePunct(llvm::StringRef text) {
    if (!isPunct(text))
      return false;
    next();
    return true;
  }
  bool expectPunct(llvm::StringRef text) {
    if (consumePunct(text))
      return true;
    return fail(peek().pos,
                "expected '" + text.str() + "', found " + describe(peek()));
  }
  bool expectKeyword(llvm::StringRef text) {
    if (isKeyword(text)) {
      next();
      return true;
    }
    return fail(peek().pos,
                "expected '" + text.str() + "', found " + describe(peek()));
  }
  bool expectIdentifier(std::string &out) {
    if (peek().kind != Token::Kind::Identifier)
      return fail(peek().pos,
                  "expected an identifier, found " + describe(peek()));
    out = next().text;
    return true;
  }
  static std::string describe(const Token &token) {
    if (token.kind == Token::Kind::End)
      return "the end of the file";
    return "'" + token.text + "'";
  }
  bool fail(SourcePos pos, const std::string &message) {
    if (error.empty()) {
      error = message;
      errorPos = pos;
    }
    return false;
  }

  // Grammar.
  bool parseFragment(Document &document);
  bool parseTypeSpec(TypeSpec &type);
  bool parseParameters(std::vector<Parameter> &params, bool results);
  bool parseBody(std::vector<Assignment> &body);
  bool parseIdentifierList(std::vector<std::string> &names);
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseComparison();
  ExprPtr parseAdditive();
  ExprPtr parseMultiplicative();
  ExprPtr parsePower();
  ExprPtr parseUnary();
  /// How deep parseUnary is nested, and how deep it may go.
  unsigned depth = 0;
  static constexpr unsigned kMaxDepth = 256;
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr binary(const Token &op, ExprPtr lhs, ExprPtr rhs) {
    auto expr = std::make_unique<Expr>(Expr::Kind::Binary, op.pos);
    expr->text = op.text == "and" ? "&&" : op.text == "or" ? "||" : op.text;
    expr->items.push_back(std::move(lhs));
    expr->items.push_back(std::move(rhs));
    return expr;
  }

  llvm::StringRef source;
  std::vector<Token> tokens;
  unsigned index = 0;
};

bool Parser::tokenize() {
  unsigned line = 1, column = 1;
  size_t i = 0;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < source.size(); ++k, ++i) {
      if (source[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  };
  while (i < source.size()) {
    char c = source[i];
    if (llvm::isSpace(c)) {
      advance(1);
      continue;
    }
    if (c == '#') {
      while (i < source.size() && source[i] != '\n')
        advance(1);
      continue;
    }
    Token token;
    token.pos = {line, column};
    token.offset = i;
    if (c == 'i' && i + 1 < source.size() && source[i + 1] == '"') {
      // tract's escaped identifier, i"any.name": the text between the quotes
      // (backslash escapes the next character).
      size_t j = i + 2;
      std::string value;
      while (j < source.size() && source[j] != '"' && source[j] != '\n') {
        if (source[j] == '\\' && j + 1 < source.size())
          ++j;
        value.push_back(source[j]);
        ++j;
      }
      if (j >= source.size() || source[j] != '"') {
        fail(token.pos, "unterminated escaped identifier");
        return false;
      }
      if (value.empty()) {
        fail(token.pos, "empty escaped identifier");
        return false;
      }
      token.kind = Token::Kind::Identifier;
      token.text = value;
      advance(j + 1 - i);
    } else if (llvm::isAlpha(c) || c == '_') {
      size_t j = i;
      while (j < source.size() &&
             (llvm::isAlnum(source[j]) || source[j] == '_'))
        ++j;
      token.kind = Token::Kind::Identifier;
      token.text = source.slice(i, j).str();
      advance(j - i);
    } else if (llvm::isDigit(c)) {
      size_t j = i;
      bool isFloat = false;
      while (j < source.size() && llvm::isDigit(source[j]))
        ++j;
      if (j < source.size() && source[j] == '.' && j + 1 < source.size() &&
          llvm::isDigit(source[j + 1])) {
        isFloat = true;
        ++j;
        while (j < source.size() && llvm::isDigit(source[j]))
          ++j;
      } else if (j < source.size() && source[j] == '.') {
        // `1.` is a scalar too.
        isFloat = true;
        ++j;
      }
      if (j < source.size() && (source[j] == 'e' || source[j] == 'E')) {
        size_t k = j + 1;
        if (k < source.size() && (source[k] == '+' || source[k] == '-'))
          ++k;
        if (k < source.size() && llvm::isDigit(source[k])) {
          isFloat = true;
          j = k;
          while (j < source.size() && llvm::isDigit(source[j]))
            ++j;
        }
      }
      token.kind = isFloat ? Token::Kind::Scalar : Token::Kind::Integer;
      token.text = source.slice(i, j).str();
      advance(j - i);
    } else if (c == '\'' || c == '"') {
      size_t j = i + 1;
      std::string value;
      while (j < source.size() && source[j] != c && source[j] != '\n') {
        if (source[j] == '\\' && j + 1 < source.size())
          ++j;
        value.push_back(source[j]);
        ++j;
      }
      if (j >= source.size() || source[j] != c) {
        fail(token.pos, "unterminated string");
        return false;
      }
      token.kind = Token::Kind::String;
      token.text = value;
      advance(j + 1 - i);
    } else {
      static const char *twoChars[] = {
          "->", "<=", ">=", "==", "!=", "&&", "||"};
      token.kind = Token::Kind::Punct;
      for (const char *op : twoChars)
        if (source.substr(i).starts_with(op))
          token.text = op;
      if (token.text.empty()) {
        if (!llvm::StringRef("()[]{}<>,;:=+-*/^!?.").contains(c)) {
          fail(token.pos, std::string("unexpected character '") + c + "'");
          return false;
        }
        token.text = std::string(1, c);
      }
      advance(token.text.size());
    }
    token.end = i;
    tokens.push_back(std::move(token));
  }
  Token end;
  end.kind = Token::Kind::End;
  end.pos = {line, column};
  end.offset = end.end = source.size();
  tokens.push_back(end);
  return true;
}

std::optional<Document> Parser::parse(bool requireGraph) {
  if (!tokenize())
    return std::nullopt;
  Document document;
  if (isKeyword("version")) {
    next();
    const Token &version = next();
    if (version.kind != Token::Kind::Scalar &&
        version.kind != Token::Kind::Integer) {
      fail(version.pos,
           "expected a version number, found " + describe(version));
      return std::nullopt;
    }
    document.version = version.text;
    if (!expectPunct(";"))
      return std::nullopt;
  } else if (requireGraph) {
    fail(peek().pos, "expected 'version', found " + describe(peek()));
    return std::nullopt;
  }
  while (isKeyword("extension")) {
    const Token &keyword = next();
    size_t start = keyword.end;
    while (!isPunct(";") && peek().kind != Token::Kind::End)
      next();
    if (!isPunct(";")) {
      fail(keyword.pos, "extension line without ';'");
      return std::nullopt;
    }
    Extension extension;
    extension.pos = keyword.pos;
    extension.text = source.slice(start, peek().offset).trim().str();
    next();
    document.extensions.push_back(std::move(extension));
  }
  while (isKeyword("fragment"))
    if (!parseFragment(document))
      return std::nullopt;
  if (!isKeyword("graph")) {
    if (!requireGraph && peek().kind == Token::Kind::End)
      return document;
    fail(peek().pos,
         "expected 'fragment' or 'graph', found " + describe(peek()));
    return std::nullopt;
  }
  document.graphPos = next().pos;
  if (!expectIdentifier(document.graphName) || !expectPunct("(") ||
      !parseIdentifierList(document.inputs) || !expectPunct("->") ||
      !expectPunct("(") || !parseIdentifierList(document.outputs) ||
      !parseBody(document.body))
    return std::nullopt;
  if (peek().kind != Token::Kind::End) {
    fail(peek().pos, "expected the end of the file after the graph, found " +
                         describe(peek()));
    return std::nullopt;
  }
  return document;
}

bool Parser::parseIdentifierList(std::vector<std::string> &names) {
  if (consumePunct(")"))
    return true;
  do {
    std::string name;
    if (!expectIdentifier(name))
      return false;
    names.push_back(name);
  } while (consumePunct(","));
  return expectPunct(")");
}

bool Parser::parseFragment(Document &document) {
  Fragment fragment;
  fragment.pos = next().pos;
  if (!expectIdentifier(fragment.name))
    return false;
  if (consumePunct("<")) {
    if (!expectPunct("?"))
      return false;
    fragment.generic = true;
    if (consumePunct("=")) {
      if (!expectIdentifier(fragment.genericDefault))
        return false;
    }
    if (!expectPunct(">"))
      return false;
  }
  if (!expectPunct("(") || !parseParameters(fragment.params, false) ||
      !expectPunct("->") || !expectPunct("(") ||
      !parseParameters(fragment.results, true))
    return false;
  if (consumePunct(";")) {
    document.fragments.push_back(std::move(fragment));
    return true;
  }
  fragment.body.emplace();
  if (!parseBody(*fragment.body))
    return false;
  document.fragments.push_back(std::move(fragment));
  return true;
}

bool Parser::parseParameters(std::vector<Parameter> &params, bool results) {
  if (consumePunct(")"))
    return true;
  do {
    Parameter param;
    param.pos = peek().pos;
    if (!expectIdentifier(param.name) || !expectPunct(":") ||
        !parseTypeSpec(param.type))
      return false;
    if (!results && consumePunct("=")) {
      param.defaultValue = parseExpr();
      if (!param.defaultValue)
        return false;
    }
    params.push_back(std::move(param));
  } while (consumePunct(","));
  return expectPunct(")");
}

bool Parser::parseTypeSpec(TypeSpec &type) {
  static const char *names[] = {"integer", "scalar", "logical", "string"};
  if (consumePunct("(")) {
    type.kind = TypeSpec::Kind::Tuple;
    do {
      TypeSpec item;
      if (!parseTypeSpec(item))
        return false;
      type.items.push_back(std::move(item));
    } while (consumePunct(","));
    if (!expectPunct(")"))
      return false;
  } else if (isKeyword("tensor")) {
    next();
    type.kind = TypeSpec::Kind::Tensor;
    if (!expectPunct("<"))
      return false;
    if (consumePunct("?"))
      type.name = "?";
    else if (peek().kind == Token::Kind::Identifier)
      type.name = next().text;
    if (!expectPunct(">"))
      return false;
  } else if (consumePunct("?")) {
    type.name = "?";
  } else {
    SourcePos pos = peek().pos;
    if (!expectIdentifier(type.name))
      return false;
    if (!llvm::is_contained(names, type.name))
      return fail(pos, "unknown type '" + type.name + "'");
  }
  while (isPunct("[") && isPunct("]", 1)) {
    next();
    next();
    TypeSpec array;
    array.kind = TypeSpec::Kind::Array;
    array.items.push_back(std::move(type));
    type = std::move(array);
  }
  return true;
}

bool Parser::parseBody(std::vector<Assignment> &body) {
  if (!expectPunct("{"))
    return false;
  while (!consumePunct("}")) {
    if (peek().kind == Token::Kind::End)
      return fail(peek().pos, "expected '}', found the end of the file");
    Assignment assignment;
    assignment.pos = peek().pos;
    assignment.lhs = parsePrimary();
    if (!assignment.lhs)
      return false;
    // `a, b = split(...)`: tract writes (and reads) a tuple of results
    // without its parentheses; it means `(a, b) = ...`.
    if (isPunct(",")) {
      auto tuple = std::make_unique<Expr>(Expr::Kind::Tuple, assignment.pos);
      tuple->items.push_back(std::move(assignment.lhs));
      while (consumePunct(",")) {
        ExprPtr item = parsePrimary();
        if (!item)
          return false;
        tuple->items.push_back(std::move(item));
      }
      assignment.lhs = std::move(tuple);
    }
    if (!expectPunct("="))
      return false;
    assignment.rhs = parseExpr();
    if (!assignment.rhs || !expectPunct(";"))
      return false;
    body.push_back(std::move(assignment));
  }
  return true;
}

ExprPtr Parser::parseExpr() {
  ExprPtr value = parseOr();
  if (!value)
    return nullptr;
  if (!isKeyword("if"))
    return value;
  SourcePos pos = next().pos;
  ExprPtr cond = parseOr();
  if (!cond || !expectKeyword("else"))
    return nullptr;
  ExprPtr otherwise = parseExpr();
  if (!otherwise)
    return nullptr;
  auto expr = std::make_unique<Expr>(Expr::Kind::Conditional, pos);
  expr->items.push_back(std::move(value));
  expr->items.push_back(std::move(cond));
  expr->items.push_back(std::move(otherwise));
  return expr;
}

ExprPtr Parser::parseOr() {
  ExprPtr lhs = parseAnd();
  while (lhs && (isPunct("||") || isKeyword("or"))) {
    Token op = next();
    ExprPtr rhs = parseAnd();
    if (!rhs)
      return nullptr;
    lhs = binary(op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  ExprPtr lhs = parseComparison();
  while (lhs && (isPunct("&&") || isKeyword("and"))) {
    Token op = next();
    ExprPtr rhs = parseComparison();
    if (!rhs)
      return nullptr;
    lhs = binary(op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseComparison() {
  ExprPtr lhs = parseAdditive();
  while (lhs &&
         (isPunct("<") || isPunct(">") || isPunct("<=") || isPunct(">=") ||
          isPunct("==") || isPunct("!=") || isKeyword("in"))) {
    Token op = next();
    ExprPtr rhs = parseAdditive();
    if (!rhs)
      return nullptr;
    lhs = binary(op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseAdditive() {
  ExprPtr lhs = parseMultiplicative();
  while (lhs && (isPunct("+") || isPunct("-"))) {
    Token op = next();
    ExprPtr rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    lhs = binary(op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseMultiplicative() {
  ExprPtr lhs = parsePower();
  while (lhs && (isPunct("*") || isPunct("/"))) {
    Token op = next();
    ExprPtr rhs = parsePower();
    if (!rhs)
      return nullptr;
    lhs = binary(op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parsePower() {
  ExprPtr lhs = parseUnary();
  if (lhs && isPunct("^")) {
    Token op = next();
    ExprPtr rhs = parsePower();
    if (!rhs)
      return nullptr;
    return binary(op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  // Every nested expression (brackets, arguments, operands) passes here:
  // a bound on the nesting bounds the recursion of the parser and of what
  // walks its trees.
  if (depth == kMaxDepth) {
    fail(peek().pos, "expressions nest deeper than " +
                         std::to_string(kMaxDepth) + " levels");
    return nullptr;
  }
  ++depth;
  llvm::scope_exit leave([&] { --depth; });
  if (isPunct("-") || isPunct("+") || isPunct("!") || isKeyword("not")) {
    Token op = next();
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    if (op.text == "+")
      return operand;
    auto expr = std::make_unique<Expr>(Expr::Kind::Unary, op.pos);
    expr->text = op.text == "not" ? "!" : op.text;
    expr->items.push_back(std::move(operand));
    return expr;
  }
  return parsePostfix();
}

ExprPtr Parser::parsePostfix() {
  ExprPtr expr = parsePrimary();
  while (expr && isPunct("[")) {
    SourcePos pos = next().pos;
    auto subscript = std::make_unique<Expr>(Expr::Kind::Subscript, pos);
    subscript->items.push_back(std::move(expr));
    ExprPtr begin;
    if (!isPunct(":")) {
      begin = parseExpr();
      if (!begin)
        return nullptr;
    }
    subscript->items.push_back(std::move(begin));
    if (consumePunct(":")) {
      subscript->range = true;
      ExprPtr end;
      if (!isPunct("]")) {
        end = parseExpr();
        if (!end)
          return nullptr;
      }
      subscript->items.push_back(std::move(end));
    } else if (!subscript->items[1]) {
      fail(pos, "expected an index");
      return nullptr;
    }
    if (!expectPunct("]"))
      return nullptr;
    expr = std::move(subscript);
  }
  return expr;
}

ExprPtr Parser::parsePrimary() {
  const Token &token = peek();
  switch (token.kind) {
  case Token::Kind::Integer:
  case Token::Kind::Scalar:
  case Token::Kind::String: {
    auto expr = std::make_unique<Expr>(
        token.kind == Token::Kind::Integer  ? Expr::Kind::Integer
        : token.kind == Token::Kind::Scalar ? Expr::Kind::Scalar
                                            : Expr::Kind::String,
        token.pos);
    expr->text = token.text;
    next();
    return expr;
  }
  case Token::Kind::Identifier: {
    if (token.text == "true" || token.text == "false") {
      auto expr = std::make_unique<Expr>(Expr::Kind::Logical, token.pos);
      expr->text = token.text;
      next();
      return expr;
    }
    Token name = next();
    // An invocation, possibly generic: `name<type>(` or `name(`.
    std::string generic;
    if (isPunct("<") && isPunct(">", 2) && isPunct("(", 3) &&
        (peek(1).kind == Token::Kind::Identifier || isPunct("?", 1))) {
      next();
      generic = next().text;
      next();
    }
    if (!isPunct("(")) {
      auto expr = std::make_unique<Expr>(Expr::Kind::Identifier, name.pos);
      expr->text = name.text;
      return expr;
    }
    next();
    auto expr = std::make_unique<Expr>(Expr::Kind::Invocation, name.pos);
    expr->text = name.text;
    expr->generic = generic;
    if (consumePunct(")"))
      return expr;
    do {
      Argument argument;
      if (peek().kind == Token::Kind::Identifier && isPunct("=", 1)) {
        argument.name = next().text;
        next();
      } else if (!expr->args.empty() && !expr->args.back().name.empty()) {
        fail(peek().pos, "positional argument after a named argument");
        return nullptr;
      }
      argument.value = parseExpr();
      if (!argument.value)
        return nullptr;
      expr->args.push_back(std::move(argument));
    } while (consumePunct(","));
    if (!expectPunct(")"))
      return nullptr;
    return expr;
  }
  case Token::Kind::Punct: {
    if (token.text == "[") {
      auto expr = std::make_unique<Expr>(Expr::Kind::Array, token.pos);
      next();
      if (isKeyword("for")) {
        expr->kind = Expr::Kind::Comprehension;
        next();
        do {
          std::string var;
          if (!expectIdentifier(var) || !expectKeyword("in"))
            return nullptr;
          ExprPtr iterable = parseAdditive();
          if (!iterable)
            return nullptr;
          expr->loopVars.push_back(var);
          expr->items.push_back(std::move(iterable));
        } while (consumePunct(","));
        if (isKeyword("if")) {
          next();
          expr->cond = parseOr();
          if (!expr->cond)
            return nullptr;
        }
        if (!expectKeyword("yield"))
          return nullptr;
        expr->yield = parseExpr();
        if (!expr->yield || !expectPunct("]"))
          return nullptr;
        return expr;
      }
      if (consumePunct("]"))
        return expr;
      do {
        ExprPtr item = parseExpr();
        if (!item)
          return nullptr;
        expr->items.push_back(std::move(item));
      } while (consumePunct(","));
      if (!expectPunct("]"))
        return nullptr;
      return expr;
    }
    if (token.text == "(") {
      SourcePos pos = next().pos;
      ExprPtr first = parseExpr();
      if (!first)
        return nullptr;
      if (consumePunct(")"))
        return first;
      auto expr = std::make_unique<Expr>(Expr::Kind::Tuple, pos);
      expr->items.push_back(std::move(first));
      while (consumePunct(",")) {
        ExprPtr item = parseExpr();
        if (!item)
          return nullptr;
        expr->items.push_back(std::move(item));
      }
      if (!expectPunct(")"))
        return nullptr;
      return expr;
    }
    break;
  }
  default:
    break;
  }
  fail(token.pos, "expected an expression, found " + describe(token));
  return nullptr;
}

} // namespace

std::optional<Document> mlir::tract::nnef::parseDocument(llvm::StringRef text,
                                                         std::string &error,
                                                         SourcePos &errorPos,
                                                         bool requireGraph) {
  Parser parser(text);
  std::optional<Document> document = parser.parse(requireGraph);
  if (!document) {
    error = parser.error;
    errorPos = parser.errorPos;
  }
  return document;
}
