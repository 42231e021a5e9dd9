//===- MappedWeights.cpp - large ONNX weights read in place ---------------===//

#include "frontends/onnx/MappedWeights.h"

#include "dialects/tract/TractFolding.h"
#include "frontends/onnx/onnx.pb.h"
#include "mlir/IR/AsmState.h"
#include "llvm/Support/FileSystem.h"

#include <map>
#include <sys/mman.h>

namespace mlir::tract::onnx {

namespace {

/// A mapping of `length` bytes at `offset` of `path`, or null.
std::shared_ptr<MappedFile> mapRange(llvm::StringRef path, uint64_t offset,
                                     uint64_t length) {
  int fd = -1;
  if (llvm::sys::fs::openFileForRead(path, fd))
    return nullptr;
  uint64_t page = llvm::sys::fs::mapped_file_region::alignment();
  uint64_t start = offset / page * page;
  auto file = std::make_shared<MappedFile>();
  std::error_code ec;
  file->region = llvm::sys::fs::mapped_file_region(
      llvm::sys::fs::convertFDToNativeFile(fd),
      llvm::sys::fs::mapped_file_region::readonly, length + (offset - start),
      start, ec);
  llvm::sys::fs::closeFile(fd);
  if (ec || !file->region)
    return nullptr;
  file->skip = offset - start;
  return file;
}

/// Protobuf's wire format, as far as finding fields goes.
struct WireReader {
  const unsigned char *at, *end;
  bool failed = false;

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && at < end; shift += 7) {
      unsigned char byte = *at++;
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value;
    }
    failed = true;
    return 0;
  }
  /// Reads a tag: its field and, for a length-delimited field, the range
  /// of its payload (other fields are skipped). False at the end or on a
  /// malformed message.
  bool next(uint32_t &field, const unsigned char *&payload, uint64_t &size) {
    if (at >= end || failed)
      return false;
    uint64_t tag = varint();
    field = static_cast<uint32_t>(tag >> 3);
    payload = nullptr;
    size = 0;
    switch (tag & 7) {
    case 0:
      varint();
      break;
    case 1:
      at += 8;
      break;
    case 5:
      at += 4;
      break;
    case 2:
      size = varint();
      if (size > uint64_t(end - at)) {
        failed = true;
        return false;
      }
      payload = at;
      at += size;
      break;
    default:
      failed = true;
      return false;
    }
    return !failed && at <= end;
  }
};

// Field numbers of onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorRawData = 9;

/// The names `graph`'s subgraphs read, however deep.
void collectSubgraphReads(const ::onnx::GraphProto &graph,
                          std::set<std::string> &names) {
  for (const ::onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      names.insert(input);
    for (const ::onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g())
        collectSubgraphReads(attribute.g(), names);
      for (const ::onnx::GraphProto &nested : attribute.graphs())
        collectSubgraphReads(nested, names);
    }
  }
}

void appendVarint(std::string &out, uint64_t value) {
  do {
    unsigned char byte = value & 0x7f;
    value >>= 7;
    out.push_back(static_cast<char>(byte | (value ? 0x80 : 0)));
  } while (value);
}

/// A length-delimited field `field` holding `payload`.
void appendMessage(std::string &out, uint32_t field,
                   const std::string &payload) {
  appendVarint(out, (uint64_t(field) << 3) | 2);
  appendVarint(out, payload.size());
  out += payload;
}

/// The fields of the message in [begin, end), each either copied as it is
/// or, when `rewrite` says so (it returns true), replaced by what it
/// appended. False when the message is malformed.
bool rewriteMessage(const unsigned char *begin, const unsigned char *end,
                    std::string &out,
                    llvm::function_ref<bool(uint32_t, const unsigned char *,
                                            uint64_t, std::string &)>
                        rewrite) {
  WireReader reader{begin, end};
  uint32_t field;
  const unsigned char *payload;
  uint64_t size;
  const unsigned char *start = reader.at;
  while (reader.next(field, payload, size)) {
    if (!payload || !rewrite(field, payload, size, out))
      out.append(reinterpret_cast<const char *>(start), reader.at - start);
    start = reader.at;
  }
  return !reader.failed;
}

DenseResourceElementsAttr blobOver(std::shared_ptr<MappedFile> file,
                                   llvm::ArrayRef<char> data, ShapedType type,
                                   llvm::StringRef name) {
  // The blob keeps the mapping alive; the data keeps the file's
  // alignment (products and gathers read it with unaligned loads).
  AsmResourceBlob blob(
      data, /*dataAlignment=*/1,
      [file = std::move(file)](void *, size_t, size_t) mutable {
        file.reset();
      },
      /*dataIsMutable=*/false);
  return DenseResourceElementsAttr::get(
      type, (llvm::Twine(kMappedWeightsPrefix) + name).str(), std::move(blob));
}

} // namespace

std::shared_ptr<MappedFile> mapModelFile(llvm::StringRef path) {
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(path, size) || size == 0)
    return nullptr;
  return mapRange(path, 0, size);
}

std::vector<std::pair<int64_t, int64_t>>
findInitializerData(const MappedFile &file) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  llvm::ArrayRef<char> bytes = file.bytes();
  auto *base = reinterpret_cast<const unsigned char *>(bytes.data());
  WireReader model{base, base + bytes.size()};
  uint32_t field;
  const unsigned char *payload;
  uint64_t size;
  while (model.next(field, payload, size)) {
    if (field != kModelGraph || !payload)
      continue;
    // The last graph field wins, as protobuf merges it; a model has one.
    spans.clear();
    WireReader graph{payload, payload + size};
    uint32_t graphField;
    const unsigned char *graphPayload;
    uint64_t graphSize;
    while (graph.next(graphField, graphPayload, graphSize)) {
      if (graphField != kGraphInitializer || !graphPayload)
        continue;
      std::pair<int64_t, int64_t> span{-1, -1};
      WireReader tensor{graphPayload, graphPayload + graphSize};
      uint32_t tensorField;
      const unsigned char *data;
      uint64_t dataSize;
      while (tensor.next(tensorField, data, dataSize))
        if (tensorField == kTensorRawData && data)
          span = {data - base, static_cast<int64_t>(dataSize)};
      spans.push_back(tensor.failed ? std::make_pair(int64_t(-1), int64_t(-1))
                                    : span);
    }
    if (graph.failed)
      return {};
  }
  if (model.failed)
    return {};
  return spans;
}

std::optional<std::string> stripLargeData(const MappedFile &file) {
  llvm::ArrayRef<char> bytes = file.bytes();
  auto *base = reinterpret_cast<const unsigned char *>(bytes.data());
  std::string skeleton;
  int graphs = 0;
  bool valid = true;
  valid &= rewriteMessage(
      base, base + bytes.size(), skeleton,
      [&](uint32_t field, const unsigned char *graph, uint64_t graphSize,
          std::string &out) {
        if (field != kModelGraph)
          return false;
        ++graphs;
        std::string strippedGraph;
        valid &= rewriteMessage(
            graph, graph + graphSize, strippedGraph,
            [&](uint32_t field, const unsigned char *tensor,
                uint64_t tensorSize, std::string &out) {
              if (field != kGraphInitializer)
                return false;
              std::string strippedTensor;
              valid &= rewriteMessage(
                  tensor, tensor + tensorSize, strippedTensor,
                  [&](uint32_t field, const unsigned char *, uint64_t size,
                      std::string &) {
                    // Dropped: the import reads it from the mapping.
                    return field == kTensorRawData &&
                           int64_t(size) >= kMappedWeightBytes;
                  });
              appendMessage(out, field, strippedTensor);
              return true;
            });
        appendMessage(out, field, strippedGraph);
        return true;
      });
  if (!valid || graphs != 1)
    return std::nullopt;
  return skeleton;
}

void dropPages(llvm::ArrayRef<char> data) {
  uintptr_t page = llvm::sys::fs::mapped_file_region::alignment();
  uintptr_t begin = llvm::alignTo(reinterpret_cast<uintptr_t>(data.data()),
                                  page);
  uintptr_t end =
      (reinterpret_cast<uintptr_t>(data.data()) + data.size()) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

std::set<std::string> weightsOnlyProductsRead(const ::onnx::GraphProto &graph) {
  std::set<std::string> initializers, others;
  for (const ::onnx::TensorProto &initializer : graph.initializer())
    initializers.insert(initializer.name());
  auto plain = [](const ::onnx::NodeProto &node) {
    return node.domain().empty() || node.domain() == "ai.onnx";
  };
  auto isProductWeight = [&](const ::onnx::NodeProto &node, size_t index) {
    return (plain(node) && index == 1 &&
            (node.op_type() == "MatMul" || node.op_type() == "Gemm")) ||
           (node.domain() == "com.microsoft" && (index == 1 || index == 2) &&
            node.op_type() == "MatMulNBits");
  };
  // The results of casts that only products read.
  std::map<std::string, bool> castsToWeights;
  for (const ::onnx::NodeProto &node : graph.node())
    if (plain(node) && node.op_type() == "Cast" && node.input_size() == 1 &&
        node.output_size() == 1 && initializers.count(node.input(0)))
      castsToWeights[node.output(0)] = true;
  for (const ::onnx::NodeProto &node : graph.node())
    for (auto [index, input] : llvm::enumerate(node.input()))
      if (auto cast = castsToWeights.find(input);
          cast != castsToWeights.end() && !isProductWeight(node, index))
        cast->second = false;
  for (const ::onnx::ValueInfoProto &output : graph.output())
    if (auto cast = castsToWeights.find(output.name());
        cast != castsToWeights.end())
      cast->second = false;
  std::set<std::string> read;
  for (const ::onnx::NodeProto &node : graph.node()) {
    for (auto [index, input] : llvm::enumerate(node.input())) {
      if (!initializers.count(input))
        continue;
      bool weight =
          isProductWeight(node, index) ||
          (plain(node) && index == 0 && node.op_type() == "Gather") ||
          (plain(node) && node.op_type() == "Cast" &&
           node.output_size() == 1 && castsToWeights.count(node.output(0)) &&
           castsToWeights.at(node.output(0)));
      (weight ? read : others).insert(input);
    }
    for (const ::onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g())
        collectSubgraphReads(attribute.g(), others);
      for (const ::onnx::GraphProto &nested : attribute.graphs())
        collectSubgraphReads(nested, others);
    }
  }
  for (const ::onnx::ValueInfoProto &output : graph.output())
    others.insert(output.name());
  std::set<std::string> weights;
  for (const std::string &name : read)
    if (!others.count(name))
      weights.insert(name);
  return weights;
}

DenseResourceElementsAttr mapWeight(std::shared_ptr<MappedFile> file,
                                    int64_t offset, int64_t length,
                                    ShapedType type, llvm::StringRef name) {
  llvm::ArrayRef<char> bytes = file->bytes();
  if (offset < 0 || length < 0 || offset > int64_t(bytes.size()) ||
      length > int64_t(bytes.size()) - offset)
    return nullptr;
  return blobOver(std::move(file), bytes.slice(offset, length), type, name);
}

DenseResourceElementsAttr mapExternalWeight(llvm::StringRef path,
                                            int64_t offset, int64_t length,
                                            ShapedType type,
                                            llvm::StringRef name) {
  std::shared_ptr<MappedFile> file = mapRange(path, offset, length);
  if (!file)
    return nullptr;
  llvm::ArrayRef<char> bytes = file->bytes().take_front(length);
  return blobOver(std::move(file), bytes, type, name);
}

} // namespace mlir::tract::onnx
