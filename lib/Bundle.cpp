//===- Bundle.cpp - Host tensors, .npy/.npz and ONNX test data ------------===//

#include "lib/Bundle.h"
#include "lib/Error.h"

#include "frontends/onnx/TensorProtoData.h"
#include "frontends/onnx/onnx.pb.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <set>

using namespace mlir::tract::lib;
using llvm::ArrayRef;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

// Every format read here is little-endian, and so is every host tract-mlir
// targets; data is copied as is.
static_assert(llvm::sys::IsLittleEndianHost,
              "bundle I/O assumes a little-endian host");

namespace {

/// `'path'` or `'archive' member 'name'`, for error messages.
std::string quote(StringRef text) { return ("'" + text + "'").str(); }

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, ",");
  return text;
}

/// The byte size of a tensor, refusing bad dtypes, negative dims and
/// overflows before anything is allocated.
Expected<size_t> byteSize(tract_dtype dtype, ArrayRef<int64_t> shape,
                          StringRef what) {
  size_t width = tract_dtype_size(dtype);
  if (width == 0)
    return makeError(what + ": invalid dtype " + llvm::Twine(int(dtype)));
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return makeError(what + ": negative dim in shape " + shapeString(shape));
    if (llvm::MulOverflow(count, dim, count))
      return makeError(what + ": shape " + shapeString(shape) +
                       " overflows 64 bits");
  }
  int64_t bytes;
  if (llvm::MulOverflow(count, int64_t(width), bytes))
    return makeError(what + ": shape " + shapeString(shape) +
                     " overflows 64 bits");
  return size_t(bytes);
}

} // namespace

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

Expected<HostTensor> HostTensor::create(std::string name, tract_dtype dtype,
                                        ArrayRef<int64_t> shape) {
  Expected<size_t> bytes = byteSize(dtype, shape, "tensor " + quote(name));
  if (!bytes)
    return bytes.takeError();
  HostTensor tensor;
  tensor.name = std::move(name);
  tensor.dtype = dtype;
  tensor.shape.assign(shape.begin(), shape.end());
  tensor.numBytes = *bytes;
  if (*bytes > 0) {
    size_t rounded = llvm::alignTo(*bytes, TRACT_TENSOR_ALIGN);
    auto *pointer =
        static_cast<uint8_t *>(std::aligned_alloc(TRACT_TENSOR_ALIGN, rounded));
    if (!pointer)
      return makeError("cannot allocate " + llvm::Twine(*bytes) +
                       " bytes for tensor " + quote(tensor.name) + " (" +
                       tensor.summary() + ")");
    std::memset(pointer, 0, rounded);
    tensor.storage.reset(pointer);
  }
  return std::move(tensor);
}

Expected<HostTensor> HostTensor::fromBytes(std::string name, tract_dtype dtype,
                                           ArrayRef<int64_t> shape,
                                           StringRef bytes) {
  Expected<size_t> size = byteSize(dtype, shape, "tensor " + quote(name));
  if (!size)
    return size.takeError();
  if (*size != bytes.size())
    return makeError("tensor " + quote(name) + ": " +
                     llvm::Twine(bytes.size()) + " bytes of data for " +
                     llvm::Twine(*size) + " expected");
  Expected<HostTensor> tensor = create(std::move(name), dtype, shape);
  if (tensor && !bytes.empty())
    std::memcpy(tensor->data(), bytes.data(), bytes.size());
  return tensor;
}

Expected<HostTensor> HostTensor::fromRuntime(std::string name,
                                             tract_tensor *tensor) {
  auto copy = fromBytes(std::move(name), tensor->dtype,
                        llvm::ArrayRef<int64_t>(tensor->dims, tensor->rank),
                        llvm::StringRef(static_cast<const char *>(tensor->data),
                                        tract_tensor_nbytes(tensor)));
  tract_tensor_free(tensor);
  return copy;
}

Expected<HostTensor> HostTensor::clone() const {
  return fromBytes(name, dtype, shape, getBytes());
}

int64_t HostTensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::string HostTensor::summary() const {
  std::string text = shapeString(shape);
  return text + (shape.empty() ? "" : ",") + tract_dtype_name(dtype);
}

Expected<tract_tensor> HostTensor::getRuntimeTensor() {
  if (shape.size() > TRACT_MAX_RANK)
    return makeError("tensor " + quote(name) + " (" + summary() +
                     ") has rank " + llvm::Twine(shape.size()) +
                     ", over the runtime's " + llvm::Twine(TRACT_MAX_RANK));
  tract_tensor tensor = {};
  tensor.dtype = dtype;
  tensor.rank = shape.size();
  llvm::copy(shape, tensor.dims);
  tensor.data = data();
  return tensor;
}

/// Bools are stored as bytes; make every true byte 1 so that they compare
/// and save the same way.
static void normalizeBools(HostTensor &tensor) {
  if (tensor.getDtype() != TRACT_DT_BOOL)
    return;
  for (uint8_t &value : tensor.getMutableValues<uint8_t>())
    value = value != 0;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

namespace {

constexpr StringRef kNpyMagic("\x93NUMPY", 6);

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  llvm::SmallVector<int64_t, 4> shape;
};

/// Reads the Python dict literal of an NPY header, e.g.
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
class NpyHeaderParser {
public:
  NpyHeaderParser(StringRef text, StringRef what) : rest(text), what(what) {}

  Expected<NpyHeader> parse() {
    NpyHeader header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (!consume('{'))
      return fail("expected '{'");
    while (!consume('}')) {
      std::string key;
      if (Error error = parseString(key))
        return std::move(error);
      if (!consume(':'))
        return fail("expected ':' after '" + key + "'");
      if (key == "descr") {
        if (peek() == '[')
          return fail("structured dtypes are unsupported");
        if (Error error = parseString(header.descr))
          return std::move(error);
        seenDescr = true;
      } else if (key == "fortran_order") {
        if (consumeWord("True"))
          header.fortranOrder = true;
        else if (!consumeWord("False"))
          return fail("fortran_order is neither True nor False");
        seenOrder = true;
      } else if (key == "shape") {
        if (Error error = parseShape(header.shape))
          return std::move(error);
        seenShape = true;
      } else {
        return fail("unexpected key '" + key + "'");
      }
      if (!consume(',') && peek() != '}')
        return fail("expected ',' or '}'");
    }
    if (!rest.trim().empty())
      return fail("unexpected text after the dict");
    if (!seenDescr || !seenOrder || !seenShape)
      return fail("missing 'descr', 'fortran_order' or 'shape'");
    return std::move(header);
  }

private:
  char peek() {
    rest = rest.ltrim();
    return rest.empty() ? '\0' : rest.front();
  }
  bool consume(char c) {
    if (peek() != c)
      return false;
    rest = rest.drop_front();
    return true;
  }
  bool consumeWord(StringRef word) {
    peek();
    return rest.consume_front(word);
  }
  Error fail(const llvm::Twine &message) {
    return makeError(what + ": bad NPY header: " + message);
  }

  Error parseString(std::string &out) {
    char quoteChar = peek();
    if (quoteChar != '\'' && quoteChar != '"')
      return fail("expected a string");
    size_t end = rest.find(quoteChar, 1);
    if (end == StringRef::npos)
      return fail("unterminated string");
    StringRef text = rest.slice(1, end);
    if (text.contains('\\'))
      return fail("escapes in strings are unsupported");
    out = text.str();
    rest = rest.drop_front(end + 1);
    return Error::success();
  }

  Error parseShape(llvm::SmallVectorImpl<int64_t> &shape) {
    if (!consume('('))
      return fail("shape is not a tuple");
    while (!consume(')')) {
      peek();
      if (rest.starts_with("-"))
        return fail("negative dim in shape");
      size_t digits = 0;
      while (digits < rest.size() && llvm::isDigit(rest[digits]))
        ++digits;
      int64_t dim;
      if (digits == 0 || rest.take_front(digits).getAsInteger(10, dim))
        return fail("shape holds something other than a dim");
      shape.push_back(dim);
      rest = rest.drop_front(digits);
      rest.consume_front("L"); // Python 2 longs
      if (!consume(',') && peek() != ')')
        return fail("expected ',' or ')' in shape");
    }
    return Error::success();
  }

  StringRef rest;
  StringRef what;
};

struct NpyDtype {
  tract_dtype dtype;
  StringRef descr;
};

const NpyDtype kNpyDtypes[] = {
    {TRACT_DT_BOOL, "|b1"}, {TRACT_DT_U8, "|u1"},  {TRACT_DT_U16, "<u2"},
    {TRACT_DT_U32, "<u4"},  {TRACT_DT_U64, "<u8"}, {TRACT_DT_I8, "|i1"},
    {TRACT_DT_I16, "<i2"},  {TRACT_DT_I32, "<i4"}, {TRACT_DT_I64, "<i8"},
    {TRACT_DT_F16, "<f2"},  {TRACT_DT_F32, "<f4"}, {TRACT_DT_F64, "<f8"},
};

Expected<tract_dtype> parseNpyDescr(StringRef descr, StringRef what) {
  StringRef code = descr;
  char order = '|';
  if (!code.empty() && StringRef("<>|=").contains(code.front())) {
    order = code.front();
    code = code.drop_front();
  }
  for (const NpyDtype &known : kNpyDtypes) {
    if (code != known.descr.drop_front())
      continue;
    if (order == '>' && tract_dtype_size(known.dtype) > 1)
      return makeError(what + ": big-endian dtype '" + descr +
                       "' is unsupported (save it as '<" + code + "')");
    return known.dtype;
  }
  if (code.starts_with("O"))
    return makeError(what + ": object arrays are unsupported");
  return makeError(what + ": unsupported dtype '" + descr +
                   "' (expected one of |b1, |u1, <u2, <u4, <u8, |i1, <i2, "
                   "<i4, <i8, <f2, <f4, <f8)");
}

} // namespace

Expected<HostTensor>
mlir::tract::lib::decodeNpy(StringRef bytes, std::string name, StringRef what) {
  if (!bytes.starts_with(kNpyMagic))
    return makeError(what + ": not an NPY array (no \\x93NUMPY magic)");
  if (bytes.size() < 10)
    return makeError(what + ": truncated NPY preamble");
  unsigned major = uint8_t(bytes[6]), minor = uint8_t(bytes[7]);
  size_t headerStart, headerLength;
  if (major == 1) {
    headerStart = 10;
    headerLength = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return makeError(what + ": truncated NPY preamble");
    headerStart = 12;
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = headerLength << 8 | uint8_t(bytes[8 + i]);
  } else {
    return makeError(what + ": unsupported NPY format version " +
                     llvm::Twine(major) + "." + llvm::Twine(minor) +
                     " (1.0, 2.0 and 3.0 are supported)");
  }
  if (headerLength > bytes.size() - headerStart)
    return makeError(what + ": truncated NPY header (" +
                     llvm::Twine(headerLength) + " bytes announced, " +
                     llvm::Twine(bytes.size() - headerStart) + " present)");
  Expected<NpyHeader> header =
      NpyHeaderParser(bytes.substr(headerStart, headerLength), what).parse();
  if (!header)
    return header.takeError();
  Expected<tract_dtype> dtype = parseNpyDescr(header->descr, what);
  if (!dtype)
    return dtype.takeError();
  if (header->fortranOrder)
    return makeError(what + ": fortran_order=True (column-major) arrays are "
                            "unsupported; save a C-contiguous array");
  Expected<size_t> expected = byteSize(*dtype, header->shape, what);
  if (!expected)
    return expected.takeError();
  StringRef data = bytes.drop_front(headerStart + headerLength);
  if (data.size() != *expected)
    return makeError(
        what + ": holds " + llvm::Twine(data.size()) +
        " bytes of data, but its header's shape " + shapeString(header->shape) +
        "," + tract_dtype_name(*dtype) + " needs " + llvm::Twine(*expected));
  Expected<HostTensor> tensor =
      HostTensor::fromBytes(std::move(name), *dtype, header->shape, data);
  if (tensor)
    normalizeBools(*tensor);
  return tensor;
}

Expected<std::string> mlir::tract::lib::encodeNpy(const HostTensor &tensor) {
  const NpyDtype *npy = llvm::find_if(kNpyDtypes, [&](const NpyDtype &d) {
    return d.dtype == tensor.getDtype();
  });
  if (npy == std::end(kNpyDtypes))
    return makeError("tensor " + quote(tensor.getName()) + " is " +
                     tract_dtype_name(tensor.getDtype()) +
                     ", which .npy cannot hold (numpy has no such dtype); "
                     "cast it first");
  std::string dict = "{'descr': '" + npy->descr.str() +
                     "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : tensor.getShape())
    dict += std::to_string(dim) + ", ";
  if (tensor.getRank() > 0)
    dict.resize(dict.size() - (tensor.getRank() == 1 ? 1 : 2));
  dict += "), }";
  // The preamble, header and its final newline are padded to 64 bytes so
  // that the data is aligned, as numpy does.
  size_t preamble =
      llvm::alignTo(10 + dict.size() + 1, 64) - 10 <= UINT16_MAX ? 10 : 12;
  size_t padded = llvm::alignTo(preamble + dict.size() + 1, 64);
  dict.append(padded - preamble - dict.size() - 1, ' ');
  dict += '\n';

  std::string bytes(kNpyMagic);
  bytes += char(preamble == 10 ? 1 : 2);
  bytes += char(0);
  size_t length = dict.size();
  for (size_t i = 0; i < preamble - 8; ++i)
    bytes += char(length >> (8 * i) & 0xff);
  bytes += dict;
  bytes += tensor.getBytes();
  return bytes;
}

static Expected<std::unique_ptr<llvm::MemoryBuffer>> readFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read " + quote(path) + ": " +
                     buffer.getError().message());
  return std::move(*buffer);
}

static Error writeFile(StringRef path, StringRef bytes) {
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << bytes;
    return Error::success();
  });
}

Expected<HostTensor> mlir::tract::lib::readNpy(StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  return decodeNpy((*buffer)->getBuffer(), llvm::sys::path::stem(path).str(),
                   quote(path));
}

Error mlir::tract::lib::writeNpy(StringRef path, const HostTensor &tensor) {
  Expected<std::string> bytes = encodeNpy(tensor);
  if (!bytes)
    return bytes.takeError();
  return writeFile(path, *bytes);
}

//===----------------------------------------------------------------------===//
// .npz
//===----------------------------------------------------------------------===//

namespace {

struct ArchiveFree {
  void operator()(archive *handle) const { archive_read_free(handle); }
};
struct ArchiveWriteFree {
  void operator()(archive *handle) const { archive_write_free(handle); }
};
struct EntryFree {
  void operator()(archive_entry *entry) const { archive_entry_free(entry); }
};

// Deflate cannot expand data more than about 1032 times: a member claiming
// more than that of the whole archive is hostile, and refused before any
// allocation.
constexpr uint64_t kMaxDeflateRatio = 1032;

std::string archiveMessage(archive *handle) {
  const char *message = archive_error_string(handle);
  return message ? message : "unknown libarchive error";
}

} // namespace

Expected<std::vector<HostTensor>> mlir::tract::lib::decodeNpz(StringRef bytes,
                                                              StringRef what) {
  std::unique_ptr<archive, ArchiveFree> reader(archive_read_new());
  if (!reader)
    return makeError(what + ": cannot create a zip reader");
  archive_read_support_format_zip(reader.get());
  if (archive_read_open_memory(reader.get(), bytes.data(), bytes.size()) !=
      ARCHIVE_OK)
    return makeError(what +
                     ": not a zip archive: " + archiveMessage(reader.get()));

  uint64_t limit = uint64_t(bytes.size()) * kMaxDeflateRatio;
  std::vector<HostTensor> tensors;
  llvm::StringSet<> names;
  archive_entry *entry;
  int status;
  while ((status = archive_read_next_header(reader.get(), &entry)) ==
         ARCHIVE_OK) {
    const char *rawName = archive_entry_pathname(entry);
    StringRef member = rawName ? rawName : "";
    if (archive_entry_filetype(entry) == AE_IFDIR)
      continue;
    std::string memberWhat = (what + " member " + quote(member)).str();
    if (!member.ends_with(".npy"))
      return makeError(memberWhat + ": not a .npy array");
    if (archive_entry_size_is_set(entry) &&
        uint64_t(archive_entry_size(entry)) > limit)
      return makeError(memberWhat + ": claims " +
                       llvm::Twine(archive_entry_size(entry)) +
                       " bytes, more than the archive can hold");
    std::string data;
    char chunk[1 << 16];
    la_ssize_t got;
    while ((got = archive_read_data(reader.get(), chunk, sizeof(chunk))) > 0) {
      if (data.size() + got > limit)
        return makeError(memberWhat +
                         ": expands beyond what the archive can hold");
      data.append(chunk, got);
    }
    if (got < 0)
      return makeError(memberWhat + ": " + archiveMessage(reader.get()));
    if (archive_entry_size_is_set(entry) &&
        data.size() != uint64_t(archive_entry_size(entry)))
      return makeError(memberWhat + ": truncated (" + llvm::Twine(data.size()) +
                       " of " + llvm::Twine(archive_entry_size(entry)) +
                       " bytes)");
    std::string name = member.drop_back(4).str();
    if (!names.insert(name).second)
      return makeError(memberWhat + ": duplicate member");
    Expected<HostTensor> tensor = decodeNpy(data, name, memberWhat);
    if (!tensor)
      return tensor.takeError();
    tensors.push_back(std::move(*tensor));
  }
  if (status != ARCHIVE_EOF)
    return makeError(
        what + ": not a valid zip archive: " + archiveMessage(reader.get()));
  return std::move(tensors);
}

Expected<std::string>
mlir::tract::lib::encodeNpz(ArrayRef<HostTensor> tensors) {
  // Declared first, destroyed last: freeing the writer on an early return
  // flushes what it holds into `out`.
  std::string out;
  std::unique_ptr<archive, ArchiveWriteFree> writer(archive_write_new());
  if (!writer)
    return makeError("cannot create a zip writer");
  auto append = [](archive *, void *client, const void *buffer,
                   size_t length) -> la_ssize_t {
    static_cast<std::string *>(client)->append(
        static_cast<const char *>(buffer), length);
    return length;
  };
  if (archive_write_set_format_zip(writer.get()) != ARCHIVE_OK ||
      archive_write_zip_set_compression_store(writer.get()) != ARCHIVE_OK ||
      archive_write_set_bytes_in_last_block(writer.get(), 1) != ARCHIVE_OK ||
      archive_write_open(writer.get(), &out, nullptr, append, nullptr) !=
          ARCHIVE_OK)
    return makeError("cannot write a zip: " + archiveMessage(writer.get()));

  llvm::StringSet<> names;
  for (auto [position, tensor] : llvm::enumerate(tensors)) {
    if (tensor.getName().empty())
      return makeError("tensor " + llvm::Twine(position) +
                       " has no name to save it under");
    if (!names.insert(tensor.getName()).second)
      return makeError("two tensors are named " + quote(tensor.getName()));
    Expected<std::string> npy = encodeNpy(tensor);
    if (!npy)
      return npy.takeError();
    std::unique_ptr<archive_entry, EntryFree> entry(archive_entry_new());
    std::string member = (tensor.getName() + ".npy").str();
    archive_entry_set_pathname(entry.get(), member.c_str());
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_size(entry.get(), npy->size());
    // A fixed date keeps saved bundles reproducible; 1980-01-02 stays
    // within zip's dates (from 1980) in every time zone.
    archive_entry_set_mtime(entry.get(), 315619200, 0);
    if (archive_write_header(writer.get(), entry.get()) != ARCHIVE_OK ||
        archive_write_data(writer.get(), npy->data(), npy->size()) !=
            la_ssize_t(npy->size()))
      return makeError("cannot write member " + quote(member) + ": " +
                       archiveMessage(writer.get()));
  }
  if (archive_write_close(writer.get()) != ARCHIVE_OK)
    return makeError("cannot finish the zip: " + archiveMessage(writer.get()));
  return std::move(out);
}

Expected<std::vector<HostTensor>> mlir::tract::lib::readNpz(StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  return decodeNpz((*buffer)->getBuffer(), quote(path));
}

Error mlir::tract::lib::writeNpz(StringRef path, ArrayRef<HostTensor> tensors) {
  Expected<std::string> bytes = encodeNpz(tensors);
  if (!bytes)
    return makeError(quote(path) + ": " + llvm::toString(bytes.takeError()));
  return writeFile(path, *bytes);
}

//===----------------------------------------------------------------------===//
// ONNX TensorProto
//===----------------------------------------------------------------------===//

namespace {

/// tract's dtype of an ONNX data type; the ONNX name of the type otherwise.
std::optional<tract_dtype> convertOnnxDataType(int dataType,
                                               std::string &name) {
  using TP = ::onnx::TensorProto;
  switch (dataType) {
  case TP::BOOL:
    return TRACT_DT_BOOL;
  case TP::UINT8:
    return TRACT_DT_U8;
  case TP::UINT16:
    return TRACT_DT_U16;
  case TP::UINT32:
    return TRACT_DT_U32;
  case TP::UINT64:
    return TRACT_DT_U64;
  case TP::INT8:
    return TRACT_DT_I8;
  case TP::INT16:
    return TRACT_DT_I16;
  case TP::INT32:
    return TRACT_DT_I32;
  case TP::INT64:
    return TRACT_DT_I64;
  case TP::FLOAT16:
    return TRACT_DT_F16;
  case TP::BFLOAT16:
    return TRACT_DT_BF16;
  case TP::FLOAT:
    return TRACT_DT_F32;
  case TP::DOUBLE:
    return TRACT_DT_F64;
  default:
    name = mlir::tract::onnxDataTypeName(dataType);
    return std::nullopt;
  }
}

constexpr StringRef kNotATensor =
    " (sequence, map and optional values are unsupported)";

} // namespace

Expected<HostTensor> mlir::tract::lib::decodeTensorProto(StringRef bytes,
                                                         StringRef what) {
  using TP = ::onnx::TensorProto;
  TP proto;
  if (bytes.size() > size_t(INT_MAX) ||
      !proto.ParseFromArray(bytes.data(), int(bytes.size())))
    return makeError(what + ": not an ONNX TensorProto" + kNotATensor);
  // A SequenceProto or OptionalProto parses as a TensorProto whose fields
  // land in the wrong places: its values become a segment, or unknown fields.
  if (!proto.unknown_fields().empty() || proto.has_segment())
    return makeError(what + ": not a plain ONNX TensorProto" + kNotATensor);
  if (proto.data_type() == TP::UNDEFINED)
    return makeError(what + ": TensorProto without a data type" + kNotATensor);
  if (proto.data_type() == TP::STRING)
    return makeError(what + ": string tensors are unsupported");
  std::string dtypeName;
  std::optional<tract_dtype> dtype =
      convertOnnxDataType(proto.data_type(), dtypeName);
  if (!dtype)
    return makeError(what + ": unsupported element type " + dtypeName);
  if (proto.data_location() == TP::EXTERNAL)
    return makeError(what + ": external data is unsupported in test data");
  llvm::SmallVector<int64_t, 4> shape(proto.dims().begin(), proto.dims().end());
  Expected<size_t> expected = byteSize(*dtype, shape, what);
  if (!expected)
    return makeError(llvm::toString(expected.takeError()) + kNotATensor);
  std::string storage;
  StringRef data = mlir::tract::onnxInlineBytes(proto, storage);
  if (data.size() != *expected)
    return makeError(what + ": holds " + llvm::Twine(data.size()) +
                     " bytes of data, but its shape " + shapeString(shape) +
                     "," + tract_dtype_name(*dtype) + " needs " +
                     llvm::Twine(*expected) + kNotATensor);
  Expected<HostTensor> tensor =
      HostTensor::fromBytes(proto.name(), *dtype, shape, data);
  if (tensor)
    normalizeBools(*tensor);
  return tensor;
}

Expected<HostTensor> mlir::tract::lib::readTensorProto(StringRef path) {
  Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer = readFile(path);
  if (!buffer)
    return buffer.takeError();
  return decodeTensorProto((*buffer)->getBuffer(), quote(path));
}

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

static const HostTensor *findByName(ArrayRef<HostTensor> tensors,
                                    StringRef name) {
  if (name.empty())
    return nullptr;
  const HostTensor *found = llvm::find_if(
      tensors, [&](const HostTensor &t) { return t.getName() == name; });
  return found == tensors.end() ? nullptr : found;
}

const HostTensor *Bundle::findInput(StringRef name) const {
  return findByName(getInputs(), name);
}

const HostTensor *Bundle::findOutput(StringRef name) const {
  return findByName(getOutputs(), name);
}

const HostTensor *Bundle::getInput(size_t position) const {
  return position < getInputs().size() ? &getInputs()[position] : nullptr;
}

const HostTensor *Bundle::getOutput(size_t position) const {
  return position < getOutputs().size() ? &getOutputs()[position] : nullptr;
}

/// Reads `input_N.pb` and `output_N.pb` of an ONNX test data folder, each
/// kind in order of N, which must run from 0 without gaps.
static Expected<Bundle> loadTestDataSet(StringRef dir) {
  std::map<uint64_t, std::string> files[2]; // inputs, outputs
  const StringRef prefixes[2] = {"input_", "output_"};
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    StringRef file = llvm::sys::path::filename(it->path());
    for (int kind = 0; kind < 2; ++kind) {
      StringRef number = file;
      uint64_t n;
      if (!number.consume_front(prefixes[kind]) ||
          !number.consume_back(".pb") || number.empty() ||
          !llvm::all_of(number, llvm::isDigit) || number.getAsInteger(10, n) ||
          n > UINT32_MAX)
        continue;
      if (!files[kind].emplace(n, it->path()).second)
        return makeError(quote(dir) + ": two files for " + prefixes[kind] +
                         llvm::Twine(n) + ".pb");
    }
  }
  if (ec)
    return makeError("cannot list " + quote(dir) + ": " + ec.message());
  if (files[0].empty() && files[1].empty())
    return makeError(quote(dir) + " holds no input_N.pb or output_N.pb files");

  std::vector<HostTensor> tensors[2];
  for (int kind = 0; kind < 2; ++kind) {
    for (const auto &[n, path] : files[kind]) {
      if (n != tensors[kind].size())
        return makeError(quote(dir) + " has " + prefixes[kind] +
                         llvm::Twine(n) + ".pb but no " + prefixes[kind] +
                         llvm::Twine(tensors[kind].size()) + ".pb");
      Expected<HostTensor> tensor = readTensorProto(path);
      if (!tensor)
        return tensor.takeError();
      tensors[kind].push_back(std::move(*tensor));
    }
  }
  return Bundle(BundleKind::OnnxTestDataSet, dir.str(), std::move(tensors[0]),
                std::move(tensors[1]));
}

Expected<Bundle> mlir::tract::lib::loadBundle(StringRef path) {
  if (llvm::sys::fs::is_directory(path))
    return loadTestDataSet(path);
  if (llvm::sys::path::extension(path) == ".npz") {
    Expected<std::vector<HostTensor>> tensors = readNpz(path);
    if (!tensors)
      return tensors.takeError();
    return Bundle(BundleKind::Npz, path.str(), std::move(*tensors), {});
  }
  if (!llvm::sys::fs::exists(path))
    return makeError("bundle " + quote(path) + " does not exist");
  return makeError("bundle " + quote(path) +
                   " is neither a .npz file nor a folder of input_N.pb / "
                   "output_N.pb files");
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

namespace {

const struct {
  Approximation level;
  StringRef name;
} kApproximationNames[] = {
    {Approximation::Exact, "exact"},
    {Approximation::Close, "close"},
    {Approximation::Approximate, "approximate"},
    {Approximation::VeryApproximate, "very"},
    {Approximation::SuperApproximate, "super"},
    {Approximation::UltraApproximate, "ultra"},
};

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0) {
    float magnitude = std::ldexp(float(mantissa), -24); // zero or subnormal
    return sign ? -magnitude : magnitude;
  }
  uint32_t word = exponent == 0x1f
                      ? sign | 0x7f800000 | mantissa << 13
                      : sign | (exponent + 112) << 23 | mantissa << 13;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

/// Element `i` of a float tensor, widened to double.
double floatAt(const HostTensor &tensor, int64_t i) {
  switch (tensor.getDtype()) {
  case TRACT_DT_F16:
    return halfToFloat(tensor.getValues<uint16_t>()[i]);
  case TRACT_DT_BF16: {
    uint32_t word = uint32_t(tensor.getValues<uint16_t>()[i]) << 16;
    float value;
    std::memcpy(&value, &word, sizeof(value));
    return value;
  }
  case TRACT_DT_F32:
    return tensor.getValues<float>()[i];
  default:
    return tensor.getValues<double>()[i];
  }
}


bool floatsMatch(double expected, double got, const Tolerance &tolerance) {
  if (std::isnan(expected) || std::isnan(got))
    return std::isnan(expected) && std::isnan(got);
  if (std::isinf(expected) || std::isinf(got))
    return expected == got;
  return std::abs(got - expected) <=
         tolerance.atol + tolerance.rtol * std::abs(expected);
}

/// The multi-dimensional index of flat element `flat`: `[0,2,1]`.
std::string indexString(ArrayRef<int64_t> shape, int64_t flat) {
  llvm::SmallVector<int64_t, 4> index(shape.size());
  for (size_t axis = shape.size(); axis-- > 0;) {
    index[axis] = flat % shape[axis];
    flat /= shape[axis];
  }
  return "[" + shapeString(index) + "]";
}

std::string formatDouble(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

} // namespace

bool mlir::tract::lib::isFloat(tract_dtype dtype) {
  return dtype == TRACT_DT_F16 || dtype == TRACT_DT_BF16 ||
         dtype == TRACT_DT_F32 || dtype == TRACT_DT_F64;
}

std::string mlir::tract::lib::elementText(const HostTensor &tensor,
                                          int64_t i) {
  switch (tensor.getDtype()) {
  case TRACT_DT_BOOL:
    return tensor.getValues<uint8_t>()[i] ? "true" : "false";
  case TRACT_DT_U8:
    return std::to_string(tensor.getValues<uint8_t>()[i]);
  case TRACT_DT_U16:
    return std::to_string(tensor.getValues<uint16_t>()[i]);
  case TRACT_DT_U32:
    return std::to_string(tensor.getValues<uint32_t>()[i]);
  case TRACT_DT_U64:
    return std::to_string(tensor.getValues<uint64_t>()[i]);
  case TRACT_DT_I8:
    return std::to_string(tensor.getValues<int8_t>()[i]);
  case TRACT_DT_I16:
    return std::to_string(tensor.getValues<int16_t>()[i]);
  case TRACT_DT_I32:
    return std::to_string(tensor.getValues<int32_t>()[i]);
  case TRACT_DT_I64:
    return std::to_string(tensor.getValues<int64_t>()[i]);
  default:
    break;
  }
  char buffer[64];
  double value = floatAt(tensor, i);
  std::to_chars_result result =
      tensor.getDtype() == TRACT_DT_F64
          ? std::to_chars(buffer, buffer + sizeof(buffer), value)
          : std::to_chars(buffer, buffer + sizeof(buffer), float(value));
  return std::string(buffer, result.ptr);
}

llvm::Expected<HostTensor>
mlir::tract::lib::castFloats(const HostTensor &tensor, tract_dtype dtype) {
  if (!isFloat(tensor.getDtype()) || !isFloat(dtype))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "only float tensors are cast between float types");
  auto cast = HostTensor::create(tensor.getName().str(), dtype,
                                 tensor.getShape());
  if (!cast)
    return cast.takeError();
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    double value = floatAt(tensor, i);
    switch (dtype) {
    case TRACT_DT_F32:
      cast->getMutableValues<float>()[i] = float(value);
      break;
    case TRACT_DT_F64:
      cast->getMutableValues<double>()[i] = value;
      break;
    default: {
      // f16 and bf16, rounded to nearest even.
      llvm::APFloat narrow(value);
      bool losesInfo;
      narrow.convert(dtype == TRACT_DT_F16 ? llvm::APFloat::IEEEhalf()
                                           : llvm::APFloat::BFloat(),
                     llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      cast->getMutableValues<uint16_t>()[i] =
          uint16_t(narrow.bitcastToAPInt().getZExtValue());
      break;
    }
    }
  }
  return cast;
}

std::optional<Approximation>
mlir::tract::lib::parseApproximation(StringRef text) {
  if (text == "approx")
    return Approximation::Approximate;
  for (const auto &known : kApproximationNames)
    if (text == known.name)
      return known.level;
  return std::nullopt;
}

StringRef mlir::tract::lib::stringifyApproximation(Approximation level) {
  for (const auto &known : kApproximationNames)
    if (level == known.level)
      return known.name;
  return "";
}

Tolerance mlir::tract::lib::getTolerance(Approximation level,
                                         tract_dtype dtype) {
  if (!isFloat(dtype))
    return {};
  // tract's Approximation::atol_rtol_outliers; BF16, which tract lacks, is
  // at least as coarse as F16 and shares its row.
  bool half = dtype == TRACT_DT_F16 || dtype == TRACT_DT_BF16;
  switch (level) {
  case Approximation::Exact:
    return {};
  case Approximation::Close:
    return half ? Tolerance{1e-3, 1e-3, 0} : Tolerance{1e-7, 1e-7, 0};
  case Approximation::Approximate:
    return half ? Tolerance{1e-3, 5e-3, 0} : Tolerance{1e-4, 5e-4, 0};
  case Approximation::VeryApproximate:
    return {5e-2, 1e-2, 0};
  case Approximation::SuperApproximate:
    return {0.1, 0.05, 1e-4};
  case Approximation::UltraApproximate:
    return {0.2, 0.1, 5e-4};
  }
  return {};
}

llvm::Expected<RankOverlap>
mlir::tract::lib::rankBiasedOverlap(const HostTensor &expected,
                                    const HostTensor &got, double p,
                                    int64_t depth) {
  std::string subject = expected.getName().empty()
                            ? ""
                            : "tensor " + quote(expected.getName()) + ": ";
  if (expected.getShape() != got.getShape() || expected.getRank() == 0 ||
      !isFloat(expected.getDtype()) || !isFloat(got.getDtype()))
    return makeError(subject + "ranks compare float tensors of one shape, "
                               "not " +
                     expected.summary() + " and " + got.summary());
  int64_t width = expected.getShape().back();
  RankOverlap overlap;
  if (width == 0 || expected.getNumElements() == 0)
    return overlap;
  int64_t ranks = std::min(depth, width);
  // Each vector's entries, best first (NaN last, ties by index).
  auto ranking = [&](const HostTensor &tensor, int64_t at) {
    std::vector<int64_t> order(width);
    std::iota(order.begin(), order.end(), 0);
    auto value = [&](int64_t i) {
      double v = floatAt(tensor, at + i);
      return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v;
    };
    std::partial_sort(order.begin(), order.begin() + ranks, order.end(),
                      [&](int64_t a, int64_t b) {
                        double x = value(a), y = value(b);
                        return x > y || (x == y && a < b);
                      });
    order.resize(ranks);
    return order;
  };
  double sum = 0;
  overlap.vectors = expected.getNumElements() / width;
  for (int64_t vector = 0; vector < overlap.vectors; ++vector) {
    std::vector<int64_t> a = ranking(expected, vector * width),
                         b = ranking(got, vector * width);
    std::set<int64_t> seenA, seenB;
    int64_t common = 0;
    double weighted = 0, weight = 1, agreement = 0;
    for (int64_t d = 1; d <= ranks; ++d) {
      int64_t x = a[d - 1], y = b[d - 1];
      if (x == y) {
        ++common;
      } else {
        common += seenB.count(x) + seenA.count(y);
        seenA.insert(x);
        seenB.insert(y);
      }
      agreement = double(common) / double(d);
      weight *= p; // p^d
      weighted += agreement * weight;
    }
    // Extrapolated: the agreement at the last rank holds below it.
    double rbo = p == 0 ? (a[0] == b[0] ? 1.0 : 0.0)
                        : agreement * weight + (1 - p) / p * weighted;
    overlap.lowest = std::min(overlap.lowest, rbo);
    sum += rbo;
  }
  overlap.mean = sum / double(overlap.vectors);
  return overlap;
}

Error mlir::tract::lib::compareTensors(const HostTensor &expected,
                                       const HostTensor &got,
                                       Approximation level) {
  std::string subject = expected.getName().empty()
                            ? ""
                            : "tensor " + quote(expected.getName()) + ": ";
  if (expected.getDtype() != got.getDtype() ||
      expected.getShape() != got.getShape())
    return makeError(subject + "expected " + expected.summary() + ", got " +
                     got.summary());

  tract_dtype dtype = expected.getDtype();
  Tolerance tolerance = getTolerance(level, dtype);
  int64_t count = expected.getNumElements();
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < count; ++i) {
    bool match;
    if (isFloat(dtype)) {
      match = floatsMatch(floatAt(expected, i), floatAt(got, i), tolerance);
    } else if (dtype == TRACT_DT_BOOL) {
      match = (expected.data()[i] != 0) == (got.data()[i] != 0);
    } else {
      size_t width = tract_dtype_size(dtype);
      match = !std::memcmp(expected.data() + i * width, got.data() + i * width,
                           width);
    }
    if (!match && mismatches++ == 0)
      first = i;
  }
  // As tract: a fraction of outliers over the allowed one fails.
  if (mismatches == 0 || double(mismatches) / count <= tolerance.outliers)
    return Error::success();

  std::string rule = "exact";
  if (isFloat(dtype) && level != Approximation::Exact) {
    rule = (stringifyApproximation(level) + ": atol " +
            formatDouble(tolerance.atol) + ", rtol " +
            formatDouble(tolerance.rtol))
               .str();
    if (tolerance.outliers > 0)
      rule +=
          ", outliers up to " + formatDouble(tolerance.outliers * 100) + "%";
  }
  return makeError(subject + "mismatch at " +
                   indexString(expected.getShape(), first) + ": expected " +
                   elementText(expected, first) + ", got " + elementText(got, first) +
                   "; " + llvm::Twine(mismatches) + " of " +
                   llvm::Twine(count) + " values differ (" + rule + ")");
}
