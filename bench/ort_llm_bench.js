// tract's llm-bench, with onnxruntime-node on one CPU thread, for
// scripts/llm-bench.sh. Usage:
//   node ort_llm_bench.js MODEL [--time-ms 2000] [--warmup-ms 300]
//                         [--threads 1]
// MODEL is a decoder exported as HuggingFace exporters write them: an
// integer input of tokens (B, S) and key/value inputs (B, heads, P, d),
// whose heads and d are read from the session's input metadata.
//   PP512: the prompt of 512 tokens with an empty past (P = 0), timed as
//          ort_bench.js times a model: the mean run over --time-ms;
//   TG128: 128 steps of one token over a past of 0 to 127 tokens, one run
//          each, their times summed.
// The inputs are made up (tokens 0..7, values in [-1, 1)), as tract's
// llm-bench makes them; an attention_mask (B, P+S) is all ones and
// position_ids (B, S) count from P, as onnxruntime's generative-AI exports
// take them. Prints one JSON line:
//   {"pp512_tokens_per_s", "pp512_runs", "tg128_tokens_per_s", "load_ms"}
// (load_ms: the session's creation, the model's loading and optimization).
'use strict';

function parseArgs(argv) {
  const options = {timeMs: 2000, warmupMs: 300, threads: 1, positional: []};
  const numbers = {'--time-ms': 'timeMs', '--warmup-ms': 'warmupMs',
                   '--threads': 'threads'};
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] in numbers) options[numbers[argv[i]]] = Number(argv[++i]);
    else if (argv[i].startsWith('--')) throw new Error(`unknown flag ${argv[i]}`);
    else options.positional.push(argv[i]);
  }
  if (options.positional.length !== 1)
    throw new Error('usage: ort_llm_bench.js MODEL [--time-ms N] ...');
  return options;
}

function nowMs() { return Number(process.hrtime.bigint()) / 1e6; }

// A xorshift stream, so that both engines' made-up inputs are alike.
function makeRandom() {
  let state = 0x9e3779b97f4a7c15n;
  const mask = (1n << 64n) - 1n;
  return () => {
    state ^= (state << 13n) & mask;
    state ^= state >> 7n;
    state ^= (state << 17n) & mask;
    return state;
  };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const [model] = options.positional;
  const ort = require('onnxruntime-node');
  const sessionOptions = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: options.threads,
    interOpNumThreads: 1,
    logSeverityLevel: 3,
  };
  // This session tells the inputs' names and shapes, and goes before the
  // session that runs is made (the weights would be in memory twice).
  const session = await ort.InferenceSession.create(model, sessionOptions);
  const inputNames = session.inputNames, outputNames = session.outputNames;
  const metadata = session.inputMetadata;
  await session.release();
  const next = makeRandom();

  // The inputs for S new tokens over a past of P.
  function feedsAt(tokens, past) {
    const feeds = {};
    for (const [index, name] of inputNames.entries()) {
      const info = metadata[index] || metadata[name];
      const isInteger = info.type === 'int64' || info.type === 'int32';
      if (isInteger && (name === 'attention_mask' || name === 'position_ids')) {
        // As tract's llm-bench gives them: every position seen, and the
        // new tokens' positions.
        const mask = name === 'attention_mask';
        const count = mask ? past + tokens : tokens;
        const data = info.type === 'int64' ? new BigInt64Array(count)
                                           : new Int32Array(count);
        for (let i = 0; i < count; ++i) {
          const value = mask ? 1 : past + i;
          data[i] = info.type === 'int64' ? BigInt(value) : value;
        }
        feeds[name] = new ort.Tensor(info.type, data, [1, count]);
      } else if (isInteger) {
        const count = tokens;
        const data = info.type === 'int64' ? new BigInt64Array(count)
                                           : new Int32Array(count);
        for (let i = 0; i < count; ++i)
          data[i] = info.type === 'int64' ? next() % 8n : Number(next() % 8n);
        feeds[name] = new ort.Tensor(info.type, data, [1, tokens]);
      } else {
        const dims = info.shape.map((dim, axis) =>
            axis === 0 ? 1 : axis === 2 ? past : dim);
        if (dims.some((dim) => typeof dim !== 'number'))
          throw new Error(`input '${name}' has shape ${info.shape}: ` +
                          'expected B, heads, P, d with static heads and d');
        const count = dims.reduce((a, b) => a * b, 1);
        const data = new Float32Array(count);
        for (let i = 0; i < count; ++i)
          data[i] = Number(next() >> 11n) * 2 ** -53 * 2 - 1;
        feeds[name] = new ort.Tensor('float32', data, dims);
      }
    }
    return feeds;
  }

  // The synchronous native call behind session.run(), as ort_bench.js.
  const {binding, initOrt} = require('onnxruntime-node/dist/binding');
  initOrt();
  const native = new binding.InferenceSession();
  const loadStart = nowMs();
  native.loadModel(model, sessionOptions);
  const loadMs = nowMs() - loadStart;
  const fetches = {};
  for (const name of outputNames) fetches[name] = null;
  const run = (feeds) => native.run(feeds, fetches, {});

  const prompt = feedsAt(512, 0);
  const warmupStart = nowMs();
  do run(prompt); while (nowMs() - warmupStart < options.warmupMs);
  let runs = 0;
  const start = nowMs();
  do { run(prompt); ++runs; } while (nowMs() - start < options.timeMs);
  const promptMs = (nowMs() - start) / runs;

  // Each step's inputs made before its clock starts, one step's at a time
  // (as tract's llm-bench: the 128 pasts of a real model's cache at once
  // would take more memory than its weights); one warm-up pass.
  for (let past = 0; past < 128; ++past) run(feedsAt(1, past));
  let generationMs = 0;
  for (let past = 0; past < 128; ++past) {
    const feeds = feedsAt(1, past);
    const before = nowMs();
    run(feeds);
    generationMs += nowMs() - before;
  }
  const round = (x) => Number(x.toPrecision(5));
  console.log(JSON.stringify({
    pp512_tokens_per_s: round(512 / (promptMs / 1e3)), pp512_runs: runs,
    tg128_tokens_per_s: round(128 / (generationMs / 1e3)),
    load_ms: round(loadMs)}));
}

main().catch((error) => {
  console.error(`ort_llm_bench: ${error.message}`);
  process.exit(1);
});
