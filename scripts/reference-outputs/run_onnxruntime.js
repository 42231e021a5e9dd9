// Runs ONNX models with onnxruntime-node on the CPU and writes their outputs.
// Usage: node run_onnxruntime.js [--optimized] MODEL DIR
//        node run_onnxruntime.js --batch MANIFEST
// DIR/inputs.json lists the inputs ({name, dtype, dims, file}, raw
// little-endian data in DIR/file; a string tensor gives `values` instead);
// the outputs are written the same way to DIR/outputs.json. MANIFEST is a
// JSON list of {model, dir}: each is run in turn, and one that onnxruntime
// refuses writes its message to DIR/error.txt instead of stopping the
// batch. Graph optimizations are off so that every node runs its own
// kernel, one thread, so that the reference follows the ONNX semantics node
// by node and is the same on every run. --optimized turns them on (`all`):
// a quantized model in the QDQ form then runs on onnxruntime's integer
// kernels, as its users run it, rather than in float node by node.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const arrays = {
  float32 : Float32Array,
  float64 : Float64Array,
  float16 : Uint16Array,
  int8 : Int8Array,
  uint8 : Uint8Array,
  int16 : Int16Array,
  uint16 : Uint16Array,
  int32 : Int32Array,
  uint32 : Uint32Array,
  int64 : BigInt64Array,
  uint64 : BigUint64Array,
  bool : Uint8Array,
};

function readTensor(dir, entry) {
  if (entry.dtype === 'string')
    return new ort.Tensor('string', entry.values, entry.dims);
  const TypedArray = arrays[entry.dtype];
  if (!TypedArray) throw new Error(`input '${entry.name}': dtype ${entry.dtype}`);
  const bytes = fs.readFileSync(path.join(dir, entry.file));
  // Copy into an aligned buffer: the file's buffer may start anywhere.
  const data = new TypedArray(bytes.byteLength / TypedArray.BYTES_PER_ELEMENT);
  new Uint8Array(data.buffer).set(bytes);
  return new ort.Tensor(entry.dtype, data, entry.dims);
}

async function runOne(model, dir, optimized = false) {
  const inputs = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json')));
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: optimized ? 'all' : 'disabled',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    logSeverityLevel: 3, // no warnings about unused initializers
  });
  const feeds = {};
  for (const entry of inputs) feeds[entry.name] = readTensor(dir, entry);
  const results = await session.run(feeds);
  const outputs = session.outputNames.map((name, index) => {
    const tensor = results[name];
    if (tensor.type === 'string')
      return {name, dtype : 'string', dims : tensor.dims, values : tensor.data};
    const file = `output_${index}.bin`;
    const data = tensor.data;
    fs.writeFileSync(path.join(dir, file),
                     Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return {name, dtype: tensor.type, dims: tensor.dims, file};
  });
  fs.writeFileSync(path.join(dir, 'outputs.json'), JSON.stringify(outputs));
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--batch' && args[1]) {
    const cases = JSON.parse(fs.readFileSync(args[1]));
    for (const {model, dir} of cases) {
      try {
        await runOne(model, dir);
      } catch (error) {
        fs.writeFileSync(path.join(dir, 'error.txt'), String(error.message));
      }
    }
    console.log(`onnxruntime ${ort.env.versions.node}: ${cases.length} runs`);
    return;
  }
  const optimized = args[0] === '--optimized';
  const [model, dir] = optimized ? args.slice(1) : args;
  if (!model || !dir)
    throw new Error('usage: run_onnxruntime.js [--optimized] MODEL DIR | ' +
                    '--batch MANIFEST');
  await runOne(model, dir, optimized);
  console.log(`onnxruntime ${ort.env.versions.node}: ${path.basename(model)}`);
}

main().catch((error) => {
  console.error(`run_onnxruntime: ${error.message}`);
  process.exit(1);
});
