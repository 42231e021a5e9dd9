// Times one ONNX model with onnxruntime-node on one CPU thread, for
// scripts/bench.sh. Usage:
//   node ort_bench.js MODEL BUNDLE.npz [--time-ms 2000] [--warmup-ms 300]
//                     [--min-runs 3] [--max-runs 100000] [--threads 1]
//                     [--async]
// The inputs are the bundle's members named like the model's inputs (the
// same .npz tract's --input-from-bundle reads). Members named like outputs
// are checked against the first run's outputs at tract's `approximate`
// tolerance for f32 (|got - expected| <= 1e-4 + 5e-4 |expected|), so that a
// mix-up of inputs shows as an error rather than as a figure.
// Prints one JSON line: {"runs", "best_ms", "median_ms", "mean_ms"}.
//
// The session is what users get: graph optimizations ALL, one intra-op and
// one inter-op thread. Runs are timed one by one around the native binding's
// synchronous run(), which is what the C and Python APIs time; --async times
// the public `await session.run()`, which adds a setImmediate hop per call.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

function parseArgs(argv) {
  const options = {timeMs: 2000, warmupMs: 300, minRuns: 3, maxRuns: 100000,
                   threads: 1, async: false, positional: []};
  const numbers = {'--time-ms': 'timeMs', '--warmup-ms': 'warmupMs',
                   '--min-runs': 'minRuns', '--max-runs': 'maxRuns',
                   '--threads': 'threads'};
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] in numbers) options[numbers[argv[i]]] = Number(argv[++i]);
    else if (argv[i] === '--async') options.async = true;
    else if (argv[i].startsWith('--')) throw new Error(`unknown flag ${argv[i]}`);
    else options.positional.push(argv[i]);
  }
  if (options.positional.length !== 2)
    throw new Error('usage: ort_bench.js MODEL INPUTS.npz [--time-ms N] ...');
  return options;
}

// --- .npz reading: a zip of .npy members, stored or deflated --------------

function readZip(file) {
  const buffer = fs.readFileSync(file);
  // The end-of-central-directory record is in the last 22 + 65535 bytes.
  let end = -1;
  for (let i = buffer.length - 22; i >= Math.max(0, buffer.length - 65557); --i)
    if (buffer.readUInt32LE(i) === 0x06054b50) { end = i; break; }
  if (end < 0) throw new Error(`${file}: not a zip file`);
  const count = buffer.readUInt16LE(end + 10);
  let entry = buffer.readUInt32LE(end + 16);
  const members = {};
  for (let n = 0; n < count; ++n) {
    if (buffer.readUInt32LE(entry) !== 0x02014b50)
      throw new Error(`${file}: bad central directory`);
    const method = buffer.readUInt16LE(entry + 10);
    const compressed = buffer.readUInt32LE(entry + 20);
    const nameLength = buffer.readUInt16LE(entry + 28);
    const extraLength = buffer.readUInt16LE(entry + 30);
    const commentLength = buffer.readUInt16LE(entry + 32);
    const local = buffer.readUInt32LE(entry + 42);
    const name = buffer.toString('utf8', entry + 46, entry + 46 + nameLength);
    if (compressed === 0xffffffff || local === 0xffffffff)
      throw new Error(`${file}: member ${name} needs zip64 (too large)`);
    // The local header's name and extra field may differ from the central one.
    const start = local + 30 + buffer.readUInt16LE(local + 26) +
                  buffer.readUInt16LE(local + 28);
    const raw = buffer.subarray(start, start + compressed);
    if (method === 0) members[name] = raw;
    else if (method === 8) members[name] = zlib.inflateRawSync(raw);
    else throw new Error(`${file}: member ${name} uses zip method ${method}`);
    entry += 46 + nameLength + extraLength + commentLength;
  }
  return members;
}

const npyTypes = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<f2': ['float16', Uint16Array], '|i1': ['int8', Int8Array],
  '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array],
  '<u2': ['uint16', Uint16Array], '<i4': ['int32', Int32Array],
  '<u4': ['uint32', Uint32Array], '<i8': ['int64', BigInt64Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(ort, name, bytes) {
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY')
    throw new Error(`${name}: not an .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header))
    throw new Error(`${name}: unsupported .npy header ${header.trim()}`);
  const type = npyTypes[descr[1]];
  if (!type) throw new Error(`${name}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s)
                       .map(Number);
  const [dtype, TypedArray] = type;
  const count = dims.reduce((a, b) => a * b, 1);
  // Copy into a buffer of its own: the member's data may be unaligned.
  const data = new TypedArray(count);
  const offset = headerStart + headerLength;
  new Uint8Array(data.buffer).set(
      bytes.subarray(offset, offset + count * TypedArray.BYTES_PER_ELEMENT));
  return new ort.Tensor(dtype, data, dims);
}

function check(results, expected) {
  for (const [name, want] of Object.entries(expected)) {
    const got = results[name];
    if (got.dims.join(',') !== want.dims.join(','))
      throw new Error(`output '${name}' is ${got.dims}, the bundle has ${want.dims}`);
    const float = want.type.startsWith('float');
    for (let i = 0; i < want.data.length; ++i) {
      const [g, e] = [Number(got.data[i]), Number(want.data[i])];
      const ok = float ? Math.abs(g - e) <= 1e-4 + 5e-4 * Math.abs(e) ||
                         (Number.isNaN(g) && Number.isNaN(e))
                       : g === e;
      if (!ok)
        throw new Error(`output '${name}' differs from the bundle at ${i}: ` +
                        `expected ${e}, got ${g}`);
    }
  }
}

// --- timing ----------------------------------------------------------------

function nowMs() { return Number(process.hrtime.bigint()) / 1e6; }

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const [model, bundle] = options.positional;
  const ort = require('onnxruntime-node');
  const sessionOptions = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    // --threads is the intra-op pool (tract's threads share out the tiles
    // of one op as well); ops run one after the other.
    intraOpNumThreads: options.threads,
    interOpNumThreads: 1,
    logSeverityLevel: 3, // no warnings about unused initializers
  };
  const session = await ort.InferenceSession.create(model, sessionOptions);

  const members = readZip(bundle);
  const feeds = {};
  for (const name of session.inputNames) {
    const bytes = members[name + '.npy'];
    if (!bytes) throw new Error(`${path.basename(bundle)} has no input '${name}'`);
    feeds[name] = readNpy(ort, name, bytes);
  }
  const fetches = {};
  for (const name of session.outputNames) fetches[name] = null;
  const expected = {};
  for (const name of session.outputNames)
    if (members[name + '.npy']) expected[name] = readNpy(ort, name, members[name + '.npy']);

  // The synchronous native call behind session.run(), on a session of its
  // own loaded with the same options (dist/binding.js is the package's own
  // loader of its native module).
  let run;
  if (options.async) {
    run = () => session.run(feeds);
  } else {
    const {binding, initOrt} = require('onnxruntime-node/dist/binding');
    initOrt();
    const native = new binding.InferenceSession();
    native.loadModel(model, sessionOptions);
    run = () => native.run(feeds, fetches, {});
  }

  check(await run(), expected);
  const warmupStart = nowMs();
  do await run(); while (nowMs() - warmupStart < options.warmupMs);  // >= 1 run

  const times = [];
  const start = nowMs();
  while (times.length < options.maxRuns &&
         (times.length < options.minRuns || nowMs() - start < options.timeMs)) {
    const before = nowMs();
    const result = run();
    if (options.async) await result; // no microtask hop when synchronous
    times.push(nowMs() - before);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle]
                                   : (sorted[middle - 1] + sorted[middle]) / 2;
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const round = (x) => Number(x.toPrecision(5));
  console.log(JSON.stringify({runs: times.length, best_ms: round(sorted[0]),
                              median_ms: round(median), mean_ms: round(mean)}));
}

main().catch((error) => {
  console.error(`ort_bench: ${error.message}`);
  process.exit(1);
});
