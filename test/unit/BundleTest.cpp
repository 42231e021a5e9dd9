#include "lib/Bundle.h"

#include "frontends/onnx/onnx.pb.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace mlir::tract::lib;
using llvm::Expected;
using llvm::StringRef;

namespace {

std::string dataPath(StringRef file) {
  return (StringRef(TRACT_UNIT_TEST_DATA) + "/" + file).str();
}

std::string readBytes(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// The message of a failed `Expected`, or "" (with a test failure) when it
/// succeeded.
template <typename T> std::string errorOf(Expected<T> result) {
  if (result) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(result.takeError());
}

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

template <typename T>
HostTensor makeTensor(tract_dtype dtype, std::vector<int64_t> shape,
                      std::vector<T> values, std::string name = "t") {
  HostTensor tensor =
      llvm::cantFail(HostTensor::create(std::move(name), dtype, shape));
  EXPECT_EQ(tensor.getNumBytes(), values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(tensor.data(), values.data(), tensor.getNumBytes());
  return tensor;
}

/// A scratch folder removed at the end of the test.
struct ScratchDir {
  ScratchDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tract-bundle", path));
  }
  ~ScratchDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(StringRef name) const {
    return (path.str() + "/" + name).str();
  }
  llvm::SmallString<128> path;
};

void writeBytes(StringRef path, StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec) << ec.message();
  os << bytes;
}

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "'" << std::string(text) << "' does not contain '"                    \
      << std::string(part) << "'"

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

TEST(HostTensor, SizesSummaryAndAlignment) {
  HostTensor image = llvm::cantFail(
      HostTensor::create("image", TRACT_DT_F32, {1, 3, 224, 224}));
  EXPECT_EQ(image.getNumElements(), 3 * 224 * 224);
  EXPECT_EQ(image.getNumBytes(), 4u * 3 * 224 * 224);
  EXPECT_EQ(image.summary(), "1,3,224,224,F32");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(image.data()) % TRACT_TENSOR_ALIGN, 0u);
  EXPECT_EQ(image.getValues<float>()[1234], 0.0f);

  HostTensor scalar = llvm::cantFail(HostTensor::create("s", TRACT_DT_I64, {}));
  EXPECT_EQ(scalar.getNumElements(), 1);
  EXPECT_EQ(scalar.getNumBytes(), 8u);
  EXPECT_EQ(scalar.summary(), "I64");

  HostTensor empty =
      llvm::cantFail(HostTensor::create("e", TRACT_DT_BOOL, {2, 0}));
  EXPECT_EQ(empty.getNumElements(), 0);
  EXPECT_EQ(empty.getNumBytes(), 0u);
  EXPECT_EQ(empty.summary(), "2,0,Bool");

  tract_tensor runtime = llvm::cantFail(image.getRuntimeTensor());
  EXPECT_EQ(runtime.rank, 4);
  EXPECT_EQ(runtime.dims[3], 224);
  EXPECT_EQ(tract_tensor_nbytes(&runtime), image.getNumBytes());
}

TEST(HostTensor, BadShapesAreErrors) {
  EXPECT_CONTAINS(errorOf(HostTensor::create("a", TRACT_DT_F32, {2, -1})),
                  "negative dim");
  EXPECT_CONTAINS(errorOf(HostTensor::create(
                      "a", TRACT_DT_F32, {int64_t(1) << 40, int64_t(1) << 30})),
                  "overflows");
  EXPECT_CONTAINS(errorOf(HostTensor::create("a", TRACT_DT_COUNT, {2})),
                  "invalid dtype");
  EXPECT_CONTAINS(errorOf(HostTensor::fromBytes("a", TRACT_DT_F32, {2}, "abc")),
                  "3 bytes of data for 8 expected");
  std::vector<int64_t> deep(TRACT_MAX_RANK + 1, 1);
  HostTensor tooDeep =
      llvm::cantFail(HostTensor::create("d", TRACT_DT_U8, deep));
  EXPECT_CONTAINS(errorOf(tooDeep.getRuntimeTensor()), "rank 17");
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {5}, {2, 3}, {2, 0, 3}, {1, 1, 2, 1, 3}};
  for (int i = 0; i < TRACT_DT_COUNT; ++i) {
    auto dtype = static_cast<tract_dtype>(i);
    if (dtype == TRACT_DT_BF16)
      continue;
    for (const auto &shape : shapes) {
      HostTensor tensor =
          llvm::cantFail(HostTensor::create("values", dtype, shape));
      auto bytes = tensor.getMutableValues<uint8_t>();
      for (size_t k = 0; k < bytes.size(); ++k)
        bytes[k] = dtype == TRACT_DT_BOOL ? k % 2 : uint8_t(k * 37 + 11);
      std::string npy = llvm::cantFail(encodeNpy(tensor));
      // The data starts 64-byte aligned, as numpy writes it.
      EXPECT_EQ((npy.size() - tensor.getNumBytes()) % 64, 0u);
      HostTensor back =
          llvm::cantFail(decodeNpy(npy, "values", "'values.npy'"));
      SCOPED_TRACE(tensor.summary());
      EXPECT_EQ(back.getName(), "values");
      EXPECT_EQ(back.getDtype(), dtype);
      EXPECT_EQ(back.getShape(), tensor.getShape());
      EXPECT_EQ(back.getBytes(), tensor.getBytes());
    }
  }
}

TEST(Npy, HeaderIsNumpys) {
  HostTensor tensor = makeTensor<float>(TRACT_DT_F32, {3}, {1, 2, 3});
  std::string npy = llvm::cantFail(encodeNpy(tensor));
  EXPECT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_CONTAINS(npy, "{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (3,), }");
  HostTensor scalar = makeTensor<int64_t>(TRACT_DT_I64, {}, {7});
  EXPECT_CONTAINS(llvm::cantFail(encodeNpy(scalar)), "'shape': (), }");
  HostTensor matrix = makeTensor<uint8_t>(TRACT_DT_BOOL, {1, 2}, {1, 0});
  std::string text = llvm::cantFail(encodeNpy(matrix));
  EXPECT_CONTAINS(text, "'descr': '|b1'");
  EXPECT_CONTAINS(text, "'shape': (1, 2), }");
}

TEST(Npy, Bf16IsRefusedOnWrite) {
  HostTensor tensor =
      llvm::cantFail(HostTensor::create("w", TRACT_DT_BF16, {2}));
  std::string error = errorOf(encodeNpy(tensor));
  EXPECT_CONTAINS(error, "'w' is BF16");
  EXPECT_CONTAINS(error, "numpy");
}

TEST(Npy, ReadsLaterVersionsAndNamesByStem) {
  HostTensor v2 = llvm::cantFail(readNpy(dataPath("version2.npy")));
  EXPECT_EQ(v2.getName(), "version2");
  EXPECT_EQ(v2.summary(), "4,I32");
  EXPECT_EQ(v2.getValues<int32_t>()[3], 3);
  HostTensor v3 = llvm::cantFail(readNpy(dataPath("version3.npy")));
  EXPECT_EQ(v3.summary(), "4,U16");
  EXPECT_EQ(v3.getValues<uint16_t>()[2], 2);
}

TEST(Npy, RefusesWhatItCannotRead) {
  EXPECT_CONTAINS(errorOf(readNpy(dataPath("fortran_order.npy"))),
                  "fortran_order=True");
  EXPECT_CONTAINS(errorOf(readNpy(dataPath("big_endian.npy"))),
                  "big-endian dtype '>f4'");
  EXPECT_CONTAINS(errorOf(readNpy(dataPath("object.npy"))), "object arrays");
  std::string missing = errorOf(readNpy(dataPath("missing.npy")));
  EXPECT_CONTAINS(missing, "cannot read");
  EXPECT_CONTAINS(missing, "missing.npy");
}

TEST(Npy, MalformedBytesAreErrors) {
  HostTensor tensor = makeTensor<float>(TRACT_DT_F32, {2, 2}, {1, 2, 3, 4});
  std::string npy = llvm::cantFail(encodeNpy(tensor));
  auto decode = [](StringRef bytes) {
    return errorOf(decodeNpy(bytes, "a", "'a.npy'"));
  };
  // Truncated anywhere: in the magic, the preamble, the header, the data.
  EXPECT_CONTAINS(decode(npy.substr(0, 3)), "not an NPY array");
  EXPECT_CONTAINS(decode(npy.substr(0, 9)), "truncated NPY preamble");
  EXPECT_CONTAINS(decode(npy.substr(0, 40)), "truncated NPY header");
  std::string shortData = decode(npy.substr(0, npy.size() - 1));
  EXPECT_CONTAINS(shortData, "'a.npy': holds 15 bytes of data");
  EXPECT_CONTAINS(shortData, "header's shape 2,2,F32 needs 16");
  EXPECT_CONTAINS(decode(npy + "x"), "holds 17 bytes");

  std::string version = npy;
  version[6] = 4;
  EXPECT_CONTAINS(decode(version), "unsupported NPY format version 4.0");

  auto withHeader = [&](StringRef header) {
    std::string bytes = npy;
    std::string text = header.str();
    text.resize(npy.size() - tensor.getNumBytes() - 10 - 1, ' ');
    bytes.replace(10, text.size(), text);
    return decode(bytes);
  };
  EXPECT_CONTAINS(withHeader("{'descr': [('a', '<f4')], 'fortran_order': "
                             "False, 'shape': (4,), }"),
                  "structured dtypes");
  EXPECT_CONTAINS(withHeader("{'descr': '<c8', 'fortran_order': False, "
                             "'shape': (2,), }"),
                  "unsupported dtype '<c8'");
  EXPECT_CONTAINS(withHeader("{'descr': '<f4', 'shape': (4,), }"),
                  "missing 'descr', 'fortran_order' or 'shape'");
  EXPECT_CONTAINS(withHeader("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (-4,), }"),
                  "negative dim");
  EXPECT_CONTAINS(withHeader("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (4,), 'extra': 1}"),
                  "unexpected key 'extra'");
  // A shape whose byte size overflows is refused before any allocation.
  EXPECT_CONTAINS(withHeader("{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (4611686018427387904, 4), }"),
                  "overflows");
  // Python 2 wrote longs with a suffix.
  HostTensor longs = llvm::cantFail(decodeNpy(
      [&] {
        std::string bytes = npy;
        std::string text = "{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (2L, 2L), }";
        text.resize(npy.size() - tensor.getNumBytes() - 10 - 1, ' ');
        return bytes.replace(10, text.size(), text);
      }(),
      "a", "'a.npy'"));
  EXPECT_EQ(longs.summary(), "2,2,F32");
}

//===----------------------------------------------------------------------===//
// .npz
//===----------------------------------------------------------------------===//

void checkNumpyArrays(const std::vector<HostTensor> &tensors) {
  ASSERT_EQ(tensors.size(), 6u);
  EXPECT_EQ(tensors[0].getName(), "x");
  EXPECT_EQ(tensors[0].summary(), "2,3,F32");
  EXPECT_EQ(tensors[0].getValues<float>()[5], 5.0f);
  EXPECT_EQ(tensors[1].getName(), "mask");
  EXPECT_EQ(tensors[1].summary(), "3,Bool");
  EXPECT_EQ(tensors[1].getValues<uint8_t>()[0], 1);
  EXPECT_EQ(tensors[1].getValues<uint8_t>()[1], 0);
  EXPECT_EQ(tensors[2].summary(), "3,I64");
  EXPECT_EQ(tensors[2].getValues<int64_t>()[0], -1);
  EXPECT_EQ(tensors[2].getValues<int64_t>()[2], int64_t(1) << 40);
  EXPECT_EQ(tensors[3].summary(), "3,F16");
  EXPECT_EQ(tensors[3].getValues<uint16_t>()[0], 0x3c00); // 1.0
  EXPECT_EQ(tensors[3].getValues<uint16_t>()[2], 0x7c00); // +inf
  EXPECT_EQ(tensors[4].getName(), "scalar");
  EXPECT_EQ(tensors[4].summary(), "F64");
  EXPECT_EQ(tensors[4].getValues<double>()[0], 3.25);
  EXPECT_EQ(tensors[5].summary(), "0,4,U8");
}

TEST(Npz, ReadsNumpySavez) {
  auto tensors = readNpz(dataPath("numpy_savez.npz"));
  ASSERT_TRUE(bool(tensors)) << llvm::toString(tensors.takeError());
  checkNumpyArrays(*tensors);
}

TEST(Npz, ReadsNumpySavezCompressed) {
  auto tensors = readNpz(dataPath("numpy_savez_compressed.npz"));
  ASSERT_TRUE(bool(tensors)) << llvm::toString(tensors.takeError());
  checkNumpyArrays(*tensors);
}

TEST(Npz, WritesWhatItReads) {
  std::vector<HostTensor> tensors;
  tensors.push_back(makeTensor<float>(TRACT_DT_F32, {2}, {0.5f, -1}, "out"));
  tensors.push_back(makeTensor<int32_t>(TRACT_DT_I32, {}, {42}, "count"));
  tensors.push_back(makeTensor<uint8_t>(TRACT_DT_U8, {0, 3}, {}, "none"));
  ScratchDir scratch;
  std::string path = scratch.file("outputs.npz");
  ASSERT_FALSE(errorOf(writeNpz(path, tensors)).size());
  std::vector<HostTensor> back = llvm::cantFail(readNpz(path));
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back[i].getName(), tensors[i].getName());
    EXPECT_EQ(back[i].summary(), tensors[i].summary());
    EXPECT_EQ(back[i].getBytes(), tensors[i].getBytes());
  }
  // Stored, not deflated: the raw NPY of each member is in the file.
  std::string bytes = readBytes(path);
  EXPECT_CONTAINS(bytes, "out.npy");
  EXPECT_CONTAINS(bytes, llvm::cantFail(encodeNpy(tensors[0])));
  // Saving is reproducible.
  EXPECT_EQ(llvm::cantFail(encodeNpz(tensors)), bytes);
}

TEST(Npz, RefusesUnsavableTensorSets) {
  std::vector<HostTensor> tensors;
  tensors.push_back(makeTensor<float>(TRACT_DT_F32, {1}, {1}, "a"));
  tensors.push_back(makeTensor<float>(TRACT_DT_F32, {1}, {2}, "a"));
  EXPECT_CONTAINS(errorOf(encodeNpz(tensors)), "two tensors are named 'a'");
  tensors[1].setName("");
  EXPECT_CONTAINS(errorOf(encodeNpz(tensors)), "tensor 1 has no name");
  ScratchDir scratch;
  std::string path = scratch.file("bf16.npz");
  std::vector<HostTensor> bf16;
  bf16.push_back(llvm::cantFail(HostTensor::create("w", TRACT_DT_BF16, {1})));
  std::string error = errorOf(writeNpz(path, bf16));
  EXPECT_CONTAINS(error, "bf16.npz");
  EXPECT_CONTAINS(error, "BF16");
}

TEST(Npz, HostileArchivesNameTheFileAndMember) {
  std::string error = errorOf(readNpz(dataPath("non_npy_member.npz")));
  EXPECT_CONTAINS(error, "non_npy_member.npz' member 'readme.txt'");
  EXPECT_CONTAINS(error, "not a .npy array");

  error = errorOf(readNpz(dataPath("absurd_shape.npz")));
  EXPECT_CONTAINS(error, "absurd_shape.npz' member 'x.npy'");
  EXPECT_CONTAINS(error, "holds 16 bytes of data");

  error = errorOf(readNpz(dataPath("absurd_member_size.npz")));
  EXPECT_CONTAINS(error, "absurd_member_size.npz' member 'x.npy'");

  std::string valid = readBytes(dataPath("numpy_savez.npz"));
  ASSERT_FALSE(valid.empty());
  error = errorOf(decodeNpz(valid.substr(0, valid.size() / 2), "'cut.npz'"));
  EXPECT_CONTAINS(error, "'cut.npz'");

  error = errorOf(decodeNpz("this is not a zip archive at all", "'bad.npz'"));
  EXPECT_CONTAINS(error, "'bad.npz'");
  EXPECT_CONTAINS(error, "zip");

  // A member of the right name holding something else.
  std::vector<HostTensor> one;
  one.push_back(makeTensor<float>(TRACT_DT_F32, {1}, {1}, "x"));
  std::string zip = llvm::cantFail(encodeNpz(one));
  size_t magic = zip.find("\x93NUMPY");
  ASSERT_NE(magic, std::string::npos);
  zip[magic + 1] = 'X';
  error = errorOf(decodeNpz(zip, "'bad.npz'"));
  EXPECT_CONTAINS(error, "'bad.npz' member 'x.npy'");
}

//===----------------------------------------------------------------------===//
// ONNX test data sets
//===----------------------------------------------------------------------===//

const StringRef kNodeTests = TRACT_ONNX_NODE_TESTS;

std::string nodeTest(StringRef test, StringRef file = "") {
  std::string path = (kNodeTests + "/" + test + "/test_data_set_0").str();
  return file.empty() ? path : path + "/" + file.str();
}

TEST(OnnxTestData, ReadsTestAdd) {
  std::string dir = nodeTest("test_add");
  if (!llvm::sys::fs::is_directory(dir))
    GTEST_SKIP() << dir << " is absent (package libonnx-testdata)";
  Bundle bundle = llvm::cantFail(loadBundle(dir));
  EXPECT_EQ(bundle.getKind(), BundleKind::OnnxTestDataSet);
  ASSERT_EQ(bundle.getInputs().size(), 2u);
  ASSERT_EQ(bundle.getOutputs().size(), 1u);
  const HostTensor &x = bundle.getInputs()[0];
  const HostTensor &y = bundle.getInputs()[1];
  EXPECT_EQ(x.getName(), "x");
  EXPECT_EQ(x.summary(), "3,4,5,F32");
  EXPECT_EQ(bundle.findInput("y"), &y);
  EXPECT_EQ(bundle.getInput(1), &y);
  EXPECT_EQ(bundle.getInput(2), nullptr);
  EXPECT_EQ(bundle.findInput("sum"), nullptr);
  const HostTensor *sum = bundle.findOutput("sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(bundle.getOutput(0), sum);

  // The reference output is x + y, computed the same way in f32.
  HostTensor computed = llvm::cantFail(x.clone());
  for (int64_t i = 0; i < computed.getNumElements(); ++i)
    computed.getMutableValues<float>()[i] += y.getValues<float>()[i];
  EXPECT_FALSE(
      errorOf(compareTensors(*sum, computed, Approximation::Exact)).size());
  computed.getMutableValues<float>()[7] += 1;
  std::string error =
      errorOf(compareTensors(*sum, computed, Approximation::UltraApproximate));
  EXPECT_CONTAINS(error, "tensor 'sum': mismatch at [0,1,2]");
  EXPECT_CONTAINS(error, "1 of 60 values differ");
}

TEST(OnnxTestData, RefusesNonTensorProtos) {
  if (!llvm::sys::fs::is_directory(kNodeTests))
    GTEST_SKIP() << kNodeTests.str() << " is absent (package libonnx-testdata)";
  // A SequenceProto, an OptionalProto holding a sequence, an empty
  // OptionalProto, a string tensor.
  const std::pair<StringRef, StringRef> cases[] = {
      {"test_identity_sequence", "sequence, map and optional values"},
      {"test_optional_get_element_sequence",
       "sequence, map and optional values"},
      {"test_optional_has_element_empty", "sequence, map and optional values"},
      {"test_cast_STRING_to_FLOAT", "string tensors are unsupported"},
  };
  for (auto [test, message] : cases) {
    std::string file = nodeTest(test, "input_0.pb");
    std::string error = errorOf(readTensorProto(file));
    EXPECT_CONTAINS(error, file);
    EXPECT_CONTAINS(error, message);
    EXPECT_CONTAINS(errorOf(loadBundle(nodeTest(test))), file);
  }
}

std::string floatProto(StringRef name, float value) {
  onnx::TensorProto proto;
  proto.set_name(name.str());
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_float_data(value);
  return proto.SerializeAsString();
}

TEST(OnnxTestData, OrdersByNumberAndKeepsEmptyNames) {
  ScratchDir scratch;
  for (int n : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
    writeBytes(scratch.file("input_" + std::to_string(n) + ".pb"),
               floatProto(n == 3 ? "" : "in" + std::to_string(n), n));
  onnx::TensorProto half;
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_dims(2);
  half.add_int32_data(0x3c00);
  half.add_int32_data(0xc000);
  writeBytes(scratch.file("output_0.pb"), half.SerializeAsString());
  writeBytes(scratch.file("README"), "ignored");

  Bundle bundle = llvm::cantFail(loadBundle(scratch.path));
  ASSERT_EQ(bundle.getInputs().size(), 12u);
  for (int n = 0; n < 12; ++n)
    EXPECT_EQ(bundle.getInputs()[n].getValues<float>()[0], float(n));
  EXPECT_EQ(bundle.getInputs()[10].getName(), "in10");
  EXPECT_EQ(bundle.getInputs()[3].getName(), "");
  EXPECT_EQ(bundle.findInput(""), nullptr);
  ASSERT_EQ(bundle.getOutputs().size(), 1u);
  EXPECT_EQ(bundle.getOutputs()[0].summary(), "2,F16");
  EXPECT_EQ(bundle.getOutputs()[0].getValues<uint16_t>()[1], 0xc000);
}

TEST(OnnxTestData, GapsAndBadFilesAreErrors) {
  ScratchDir scratch;
  writeBytes(scratch.file("input_0.pb"), floatProto("a", 1));
  writeBytes(scratch.file("input_2.pb"), floatProto("c", 3));
  EXPECT_CONTAINS(errorOf(loadBundle(scratch.path)),
                  "has input_2.pb but no input_1.pb");
  writeBytes(scratch.file("input_1.pb"), "\xff\xff\xff garbage");
  std::string error = errorOf(loadBundle(scratch.path));
  EXPECT_CONTAINS(error, "input_1.pb");
  EXPECT_CONTAINS(error, "not an ONNX TensorProto");

  onnx::TensorProto lying;
  lying.set_data_type(onnx::TensorProto::FLOAT);
  lying.add_dims(int64_t(1) << 40);
  lying.add_float_data(1);
  error = errorOf(decodeTensorProto(lying.SerializeAsString(), "'lying.pb'"));
  EXPECT_CONTAINS(error, "'lying.pb': holds 4 bytes of data");

  ScratchDir empty;
  EXPECT_CONTAINS(errorOf(loadBundle(empty.path)),
                  "holds no input_N.pb or output_N.pb files");
}

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

TEST(Bundle, NpzMembersAreInputAndOutputCandidates) {
  Bundle bundle = llvm::cantFail(loadBundle(dataPath("numpy_savez.npz")));
  EXPECT_EQ(bundle.getKind(), BundleKind::Npz);
  EXPECT_EQ(bundle.getInputs().size(), 6u);
  EXPECT_EQ(bundle.getOutputs().size(), 6u);
  ASSERT_NE(bundle.findInput("ids"), nullptr);
  EXPECT_EQ(bundle.findInput("ids"), bundle.findOutput("ids"));
  EXPECT_EQ(bundle.getOutput(4)->getName(), "scalar");
  EXPECT_EQ(bundle.findOutput("ids.npy"), nullptr);
}

TEST(Bundle, OtherPathsAreErrors) {
  EXPECT_CONTAINS(errorOf(loadBundle(dataPath("version2.npy"))),
                  "neither a .npz file nor a folder");
  EXPECT_CONTAINS(errorOf(loadBundle(dataPath("nothing.npz"))), "nothing.npz");
  EXPECT_CONTAINS(errorOf(loadBundle(dataPath("nothing"))), "does not exist");
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

const Approximation kLevels[] = {Approximation::Exact,
                                 Approximation::Close,
                                 Approximation::Approximate,
                                 Approximation::VeryApproximate,
                                 Approximation::SuperApproximate,
                                 Approximation::UltraApproximate};

TEST(Compare, ParsesTractsLevelNames) {
  for (Approximation level : kLevels)
    EXPECT_EQ(parseApproximation(stringifyApproximation(level)), level);
  EXPECT_EQ(parseApproximation("approx"), Approximation::Approximate);
  EXPECT_EQ(parseApproximation("very"), Approximation::VeryApproximate);
  EXPECT_EQ(parseApproximation("loose"), std::nullopt);
}

TEST(Compare, TolerancesAreTracts) {
  auto check = [](Approximation level, tract_dtype dtype, double atol,
                  double rtol, double outliers) {
    Tolerance tolerance = getTolerance(level, dtype);
    EXPECT_EQ(tolerance.atol, atol);
    EXPECT_EQ(tolerance.rtol, rtol);
    EXPECT_EQ(tolerance.outliers, outliers);
  };
  check(Approximation::Exact, TRACT_DT_F32, 0, 0, 0);
  check(Approximation::Close, TRACT_DT_F32, 1e-7, 1e-7, 0);
  check(Approximation::Close, TRACT_DT_F16, 1e-3, 1e-3, 0);
  check(Approximation::Approximate, TRACT_DT_F64, 1e-4, 5e-4, 0);
  check(Approximation::Approximate, TRACT_DT_F16, 1e-3, 5e-3, 0);
  check(Approximation::Approximate, TRACT_DT_BF16, 1e-3, 5e-3, 0);
  check(Approximation::VeryApproximate, TRACT_DT_F32, 5e-2, 1e-2, 0);
  check(Approximation::SuperApproximate, TRACT_DT_F32, 0.1, 0.05, 1e-4);
  check(Approximation::UltraApproximate, TRACT_DT_F16, 0.2, 0.1, 5e-4);
  check(Approximation::UltraApproximate, TRACT_DT_I32, 0, 0, 0);
}

TEST(Compare, F64JustInsideAndOutsideEveryLevel) {
  for (Approximation level : kLevels) {
    SCOPED_TRACE(stringifyApproximation(level).str());
    Tolerance tolerance = getTolerance(level, TRACT_DT_F64);
    double expected = -2.0;
    double bound = tolerance.atol + tolerance.rtol * std::abs(expected);
    HostTensor reference =
        makeTensor<double>(TRACT_DT_F64, {2}, {expected, 1.0});
    HostTensor inside =
        makeTensor<double>(TRACT_DT_F64, {2}, {expected + 0.99 * bound, 1.0});
    HostTensor outside = makeTensor<double>(
        TRACT_DT_F64, {2},
        {std::nextafter(expected - 1.01 * bound, -10.0), 1.0});
    EXPECT_EQ(errorOf(compareTensors(reference, inside, level)), "");
    std::string error = errorOf(compareTensors(reference, outside, level));
    EXPECT_CONTAINS(error, "mismatch at [0]: expected -2, got -");
    EXPECT_CONTAINS(error, "1 of 2 values differ");
  }
}

TEST(Compare, F32AtCloseAndApproximate) {
  // Close: 1e-7 + 1e-7 * 1 allows one ulp of 1.0f (1.19e-7), not two.
  float one = 1.0f, next = std::nextafter(one, 2.0f);
  float next2 = std::nextafter(next, 2.0f);
  HostTensor reference = makeTensor<float>(TRACT_DT_F32, {1}, {one});
  EXPECT_EQ(errorOf(compareTensors(reference,
                                   makeTensor<float>(TRACT_DT_F32, {1}, {next}),
                                   Approximation::Close)),
            "");
  std::string error = errorOf(
      compareTensors(reference, makeTensor<float>(TRACT_DT_F32, {1}, {next2}),
                     Approximation::Close));
  EXPECT_CONTAINS(error, "expected 1, got 1.0000002");
  EXPECT_CONTAINS(error, "(close: atol 1e-07, rtol 1e-07)");
  EXPECT_CONTAINS(errorOf(compareTensors(
                      reference, makeTensor<float>(TRACT_DT_F32, {1}, {next}),
                      Approximation::Exact)),
                  "(exact)");
  // Approximate at 100: 1e-4 + 5e-4 * 100 = 0.0501.
  HostTensor hundred = makeTensor<float>(TRACT_DT_F32, {1}, {100});
  EXPECT_EQ(errorOf(compareTensors(
                hundred, makeTensor<float>(TRACT_DT_F32, {1}, {100.05f}),
                Approximation::Approximate)),
            "");
  EXPECT_NE(errorOf(compareTensors(
                hundred, makeTensor<float>(TRACT_DT_F32, {1}, {100.0502f}),
                Approximation::Approximate)),
            "");
}

TEST(Compare, F16InFloat) {
  // One ulp of 1.0 in f16 is 2^-10 = 9.77e-4.
  HostTensor reference = makeTensor<uint16_t>(TRACT_DT_F16, {1}, {0x3c00});
  auto ulps = [](uint16_t n) {
    return makeTensor<uint16_t>(TRACT_DT_F16, {1}, {uint16_t(0x3c00 + n)});
  };
  // Close: 1e-3 + 1e-3 = 2e-3, so two ulps in, three out.
  EXPECT_EQ(errorOf(compareTensors(reference, ulps(2), Approximation::Close)),
            "");
  EXPECT_CONTAINS(
      errorOf(compareTensors(reference, ulps(3), Approximation::Close)),
      "expected 1, got 1.0029297");
  // Approximate: 1e-3 + 5e-3 = 6e-3, so six ulps in, seven out.
  EXPECT_EQ(
      errorOf(compareTensors(reference, ulps(6), Approximation::Approximate)),
      "");
  EXPECT_NE(
      errorOf(compareTensors(reference, ulps(7), Approximation::Approximate)),
      "");
  // Subnormals and negative values decode too: -2^-24 vs 0.
  HostTensor tiny = makeTensor<uint16_t>(TRACT_DT_F16, {1}, {0x8001});
  HostTensor zero = makeTensor<uint16_t>(TRACT_DT_F16, {1}, {0x0000});
  EXPECT_CONTAINS(errorOf(compareTensors(zero, tiny, Approximation::Exact)),
                  "got -5.9604645e-08");
}

TEST(Compare, OutliersAtSuperAndUltra) {
  auto withOutliers = [](int count) {
    std::vector<float> values(10000, 1.0f);
    for (int i = 0; i < count; ++i)
      values[i * 100] = 5.0f;
    return makeTensor<float>(TRACT_DT_F32, {100, 100}, values);
  };
  HostTensor reference = withOutliers(0);
  // super allows 0.01% (1 in 10000), ultra 0.05% (5 in 10000).
  EXPECT_EQ(errorOf(compareTensors(reference, withOutliers(1),
                                   Approximation::SuperApproximate)),
            "");
  std::string error = errorOf(compareTensors(reference, withOutliers(2),
                                             Approximation::SuperApproximate));
  EXPECT_CONTAINS(error, "mismatch at [0,0]: expected 1, got 5; 2 of 10000 "
                         "values differ (super: atol 0.1, rtol 0.05, "
                         "outliers up to 0.01%)");
  EXPECT_EQ(errorOf(compareTensors(reference, withOutliers(5),
                                   Approximation::UltraApproximate)),
            "");
  EXPECT_CONTAINS(errorOf(compareTensors(reference, withOutliers(6),
                                         Approximation::UltraApproximate)),
                  "6 of 10000 values differ");
  EXPECT_NE(errorOf(compareTensors(reference, withOutliers(1),
                                   Approximation::VeryApproximate)),
            "");
}

TEST(Compare, IntegersAndBoolsAreExactAtEveryLevel) {
  HostTensor reference =
      makeTensor<int64_t>(TRACT_DT_I64, {3}, {100, int64_t(1) << 60, -7});
  HostTensor offByOne =
      makeTensor<int64_t>(TRACT_DT_I64, {3}, {100, (int64_t(1) << 60) + 1, -7});
  for (Approximation level : kLevels) {
    EXPECT_EQ(errorOf(compareTensors(reference, reference, level)), "");
    EXPECT_CONTAINS(errorOf(compareTensors(reference, offByOne, level)),
                    "mismatch at [1]: expected 1152921504606846976, got "
                    "1152921504606846977; 1 of 3 values differ (exact)");
  }
  HostTensor yes = makeTensor<uint8_t>(TRACT_DT_BOOL, {2}, {1, 0});
  HostTensor also = makeTensor<uint8_t>(TRACT_DT_BOOL, {2}, {7, 0});
  HostTensor no = makeTensor<uint8_t>(TRACT_DT_BOOL, {2}, {0, 0});
  EXPECT_EQ(errorOf(compareTensors(yes, also, Approximation::Exact)), "");
  EXPECT_CONTAINS(
      errorOf(compareTensors(yes, no, Approximation::UltraApproximate)),
      "expected true, got false");
}

TEST(Compare, NanAndInfinities) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  HostTensor reference =
      makeTensor<double>(TRACT_DT_F64, {3}, {nan, inf, -inf});
  EXPECT_EQ(errorOf(compareTensors(reference, reference, Approximation::Exact)),
            "");
  HostTensor numbers = makeTensor<double>(TRACT_DT_F64, {3}, {1, 1e308, -inf});
  std::string error = errorOf(
      compareTensors(reference, numbers, Approximation::UltraApproximate));
  EXPECT_CONTAINS(error, "mismatch at [0]: expected nan, got 1");
  EXPECT_CONTAINS(error, "2 of 3 values differ");
  HostTensor flipped = makeTensor<double>(TRACT_DT_F64, {3}, {nan, -inf, -inf});
  EXPECT_CONTAINS(
      errorOf(compareTensors(reference, flipped, Approximation::Exact)),
      "mismatch at [1]: expected inf, got -inf");
}

TEST(Compare, DtypeAndShapeMustMatch) {
  HostTensor reference = makeTensor<float>(TRACT_DT_F32, {2, 1}, {1, 2}, "y");
  HostTensor transposed = makeTensor<float>(TRACT_DT_F32, {1, 2}, {1, 2});
  HostTensor wider = makeTensor<double>(TRACT_DT_F64, {2, 1}, {1, 2});
  EXPECT_EQ(errorOf(compareTensors(reference, transposed,
                                   Approximation::UltraApproximate)),
            "tensor 'y': expected 2,1,F32, got 1,2,F32");
  EXPECT_EQ(errorOf(compareTensors(reference, wider,
                                   Approximation::UltraApproximate)),
            "tensor 'y': expected 2,1,F32, got 2,1,F64");
  HostTensor none = makeTensor<float>(TRACT_DT_F32, {0, 3}, {});
  EXPECT_EQ(errorOf(compareTensors(none, none, Approximation::Exact)), "");
}

} // namespace

TEST(Compare, RankBiasedOverlapOfTokenRankings) {
  // Two positions of four tokens. The first's top two are swapped: the
  // tops agree from depth 2 on, so with p = 0.5 the extrapolated overlap
  // is 0.0625 * 1 + (0.25 + 0.125 + 0.0625) = 0.5; the second's rankings
  // are the same (1).
  HostTensor reference = makeTensor<float>(TRACT_DT_F32, {1, 2, 4},
                                           {4, 3, 2, 1, 0.5, 0.1, 0.9, 0.2});
  HostTensor got = makeTensor<float>(TRACT_DT_F32, {1, 2, 4},
                                     {3, 4, 2, 1, 5, 1, 9, 2});
  auto overlap = rankBiasedOverlap(reference, got, 0.5, 4);
  ASSERT_TRUE(bool(overlap)) << llvm::toString(overlap.takeError());
  EXPECT_DOUBLE_EQ(overlap->lowest, 0.5);
  EXPECT_DOUBLE_EQ(overlap->mean, 0.75);
  EXPECT_EQ(overlap->vectors, 2);
  // p = 0: whether the first tokens agree.
  overlap = rankBiasedOverlap(reference, got, 0.0, 100);
  ASSERT_TRUE(bool(overlap)) << llvm::toString(overlap.takeError());
  EXPECT_DOUBLE_EQ(overlap->lowest, 0.0);
  EXPECT_DOUBLE_EQ(overlap->mean, 0.5);
  // Shapes must agree.
  overlap = rankBiasedOverlap(reference,
                              makeTensor<float>(TRACT_DT_F32, {4}, {1, 2, 3, 4}),
                              0.9, 100);
  EXPECT_CONTAINS(errorOf(overlap.takeError()), "float tensors of one shape");
}
