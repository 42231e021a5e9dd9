// A C++ program outside the tree that embeds tract-mlir through tract.hpp:
// the model of consumer.c, run from several threads at once.
//
//   consumer_cpp MODEL SET|- INPUT.f32 D0,D1,... EXPECTED.f32 ATOL RTOL
//
// Checks, each against the reference: two runnables of the model on two
// threads; one runnable run from two threads at once; two states of one
// runnable, each on its own thread. A wrong input throws tract::Error.
#include <tract.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <thread>

namespace {

std::vector<float> readFloats(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)),
                    std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

/// How many values of `got` are out of tolerance (all, on a size mismatch).
size_t mismatches(const tract::Value &got, const std::vector<float> &expected,
                  double atol, double rtol) {
  if (got.size() != expected.size())
    return expected.size() + 1;
  const float *data = got.data<float>();
  size_t off = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    if (std::fabs(double(data[i]) - expected[i]) >
        atol + rtol * std::fabs(expected[i]))
      ++off;
  return off;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 8) {
    std::cerr << "usage: consumer_cpp MODEL SET|- INPUT D0,D1,... EXPECTED "
                 "ATOL RTOL\n";
    return 2;
  }
  try {
    std::string path = argv[1];
    tract::Model model = path.size() > 5 && path.substr(path.size() - 5) ==
                                                ".onnx"
                             ? tract::Model::onnx(path)
                             : tract::Model::nnef(path);
    std::string set = argv[2];
    if (set != "-") {
      size_t equals = set.find('=');
      model.concretizeSymbols(
          {{set.substr(0, equals), std::stoll(set.substr(equals + 1))}});
    }
    std::vector<size_t> shape;
    std::stringstream dims(argv[4]);
    for (std::string dim; std::getline(dims, dim, ',');)
      shape.push_back(std::stoull(dim));
    std::vector<float> input = readFloats(argv[3]);
    std::vector<float> expected = readFloats(argv[5]);
    double atol = std::atof(argv[6]), rtol = std::atof(argv[7]);
    tract::Value value = tract::Value::borrow(shape, input.data());

    size_t failures = 0;
    std::mutex lock;
    auto check = [&](const char *what, const tract::Value &output) {
      size_t off = mismatches(output, expected, atol, rtol);
      std::lock_guard<std::mutex> guard(lock);
      std::cout << what << ": " << off << " out of tolerance\n";
      failures += off != 0;
    };

    // Two runnables, one per thread, each compiled for one thread.
    tract::Runnable first = model.intoRunnable(1);
    tract::Runnable second = model.intoRunnable(1);
    {
      std::thread a([&] { check("runnable 1", first.run({value})[0]); });
      std::thread b([&] { check("runnable 2", second.run({value})[0]); });
      a.join();
      b.join();
    }
    // One runnable from two threads at once, a few times each.
    {
      auto loop = [&](const char *what) {
        for (int i = 0; i < 3; ++i)
          check(what, first.run({value})[0]);
      };
      std::thread a(loop, "shared runnable, thread 1");
      std::thread b(loop, "shared runnable, thread 2");
      a.join();
      b.join();
    }
    // One runnable, a state per thread.
    {
      auto stream = [&](const char *what) {
        tract::State state = first.spawnState();
        check(what, state.run({value})[0]);
      };
      std::thread a(stream, "state 1");
      std::thread b(stream, "state 2");
      a.join();
      b.join();
    }
    try {
      tract::Value flat = tract::Value::borrow({input.size()}, input.data());
      first.run({flat});
      std::cerr << "consumer_cpp: a rank-1 input was accepted\n";
      return 1;
    } catch (const tract::Error &error) {
      std::cout << "wrong input: " << error.what() << "\n";
    }
    return failures == 0 ? 0 : 1;
  } catch (const tract::Error &error) {
    std::cerr << "consumer_cpp: " << error.what() << "\n";
    return 1;
  }
}
