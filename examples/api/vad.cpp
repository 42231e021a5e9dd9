// Silero VAD v5 through libtract's C++ API (tract.hpp): the program of
// vad.c, with RAII values and exceptions.
//
//   vad_cpp silero_vad_v5.onnx speech.wav
#include <tract.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

namespace {

constexpr int kRate = 16000, kWindow = 512, kContext = 64;

/// The samples of a 16-bit PCM WAV file, scaled to [-1, 1).
std::vector<float> readWav(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)),
                    std::istreambuf_iterator<char>());
  if (bytes.size() < 12 || bytes.compare(0, 4, "RIFF") ||
      bytes.compare(8, 4, "WAVE"))
    throw std::runtime_error("cannot read " + path);
  for (size_t at = 12; at + 8 <= bytes.size();) {
    auto byte = [&](size_t i) { return uint32_t(uint8_t(bytes[at + i])); };
    uint32_t size = byte(4) | byte(5) << 8 | byte(6) << 16 | byte(7) << 24;
    if (bytes.compare(at, 4, "data") == 0) {
      std::vector<float> samples(std::min<size_t>(size, bytes.size() - at - 8) /
                                 2);
      for (size_t i = 0; i < samples.size(); ++i) {
        size_t p = at + 8 + 2 * i;
        samples[i] = int16_t(uint8_t(bytes[p]) | uint8_t(bytes[p + 1]) << 8) /
                     32768.0f;
      }
      return samples;
    }
    at += 8 + size + (size & 1);
  }
  throw std::runtime_error(path + " has no data chunk");
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: vad_cpp MODEL.onnx SPEECH.wav\n";
    return 2;
  }
  try {
    std::vector<float> samples = readWav(argv[2]);
    tract::Model model = tract::Model::onnx(argv[1]);
    model.setInputFact(0, "1,576,f32")
        .setInputFact(1, "2,1,128,f32")
        .setInputFact(2, "sr:i64=16000");
    tract::Runnable runnable = model.intoRunnable();

    std::vector<float> window(kContext + kWindow), state(2 * 128);
    double start = -1, lastSpeech = 0;
    for (size_t at = 0; at < samples.size(); at += kWindow) {
      // The last 64 samples of the previous window, then 512 new ones.
      std::copy(window.end() - kContext, window.end(), window.begin());
      for (size_t i = 0; i < kWindow; ++i)
        window[kContext + i] = at + i < samples.size() ? samples[at + i] : 0;
      std::vector<tract::Value> outputs = runnable.run(
          {tract::Value::borrow({1, kContext + kWindow}, window.data()),
           tract::Value::borrow({2, 1, 128}, state.data())});
      float probability = outputs[0].data<float>()[0];
      std::copy_n(outputs[1].data<float>(), state.size(), state.begin());
      // Speech starts at 0.5, and ends after 100 ms below 0.35.
      double time = double(at) / kRate;
      if (probability >= 0.5f) {
        if (start < 0)
          start = time;
        lastSpeech = time + double(kWindow) / kRate;
      } else if (start >= 0 && probability < 0.35f &&
                 time - lastSpeech >= 0.1) {
        if (lastSpeech - start > 0.25)
          std::printf("speech %.2f s - %.2f s\n", start, lastSpeech);
        start = -1;
      }
    }
    if (start >= 0 && lastSpeech - start > 0.25)
      std::printf("speech %.2f s - %.2f s\n", start, lastSpeech);
    return 0;
  } catch (const std::exception &error) {
    std::cerr << "vad_cpp: " << error.what() << "\n";
    return 1;
  }
}
