// The VAD page: loads vad.wasm (Silero VAD v5 compiled by `tract compile`,
// with examples/silero-vad/vad.c), feeds it 16 kHz audio 512 samples at a
// time, and draws the waveform with the speech segments and the speech
// probability of each window. `?wav=URL` runs on that file at once (the
// browser test does); window.vadResult then holds what the page printed.
'use strict';

const RATE = 16000;
const WINDOW = 512;

// The few WASI calls a reactor built with wasi-libc may make, for a page:
// no files, no environment, output to the console.
function wasiImports(memory) {
  const view = () => new DataView(memory().buffer);
  const ok = 0, badf = 8, nosys = 52;
  let line = '';
  const calls = {
    fd_write(fd, iovs, count, written) {
      let total = 0;
      for (let i = 0; i < count; ++i) {
        const base = view().getUint32(iovs + 8 * i, true);
        const length = view().getUint32(iovs + 8 * i + 4, true);
        line += new TextDecoder().decode(new Uint8Array(memory().buffer, base, length));
        total += length;
      }
      const lines = line.split('\n');
      line = lines.pop();
      for (const l of lines) console.log('vad.wasm:', l);
      view().setUint32(written, total, true);
      return fd === 1 || fd === 2 ? ok : badf;
    },
    environ_sizes_get(count, size) {
      view().setUint32(count, 0, true);
      view().setUint32(size, 0, true);
      return ok;
    },
    environ_get() { return ok; },
    args_sizes_get(count, size) {
      view().setUint32(count, 0, true);
      view().setUint32(size, 0, true);
      return ok;
    },
    args_get() { return ok; },
    clock_time_get(id, precision, time) {
      const ns = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
      view().setBigUint64(time, ns, true);
      return ok;
    },
    random_get(buffer, length) {
      crypto.getRandomValues(new Uint8Array(memory().buffer, buffer, length));
      return ok;
    },
    proc_exit(code) { throw new Error('vad.wasm exited with ' + code); },
  };
  // Anything else (files, sockets) is not there.
  return new Proxy(calls, {
    get: (target, name) => target[name] || (() => (name.startsWith('fd_') ? badf : nosys)),
  });
}

async function loadVad(url) {
  let instance;
  const memory = () => instance.exports.memory;
  const imports = { wasi_snapshot_preview1: wasiImports(memory) };
  ({ instance } = await WebAssembly.instantiateStreaming(fetch(url), imports));
  instance.exports._initialize();
  const vad = instance.exports;
  const error = () => {
    const at = vad.vad_error();
    const bytes = new Uint8Array(memory().buffer, at);
    return new TextDecoder().decode(bytes.subarray(0, bytes.indexOf(0)));
  };
  const window = vad.vad_alloc(WINDOW * 4);
  return {
    reset() {
      if (vad.vad_reset() !== 0) throw new Error('vad_reset: ' + error());
    },
    // The probability of the next window (at most 512 samples).
    window(samples) {
      new Float32Array(memory().buffer, window, WINDOW).set(samples);
      const p = vad.vad_window(window, samples.length);
      if (p < 0) throw new Error('the model failed: ' + error());
      return p;
    },
    // Speech segments [start, end) in samples, silero's defaults.
    segments(probs, samples) {
      const p = vad.vad_alloc(probs.length * 4 + 4);
      const out = vad.vad_alloc(probs.length * 8 + 8);
      new Float32Array(memory().buffer, p, probs.length).set(probs);
      const count = vad.vad_segments_of(p, probs.length, samples, out);
      const pairs = Array.from(new Int32Array(memory().buffer, out, 2 * Math.max(count, 0)));
      vad.vad_free(p);
      vad.vad_free(out);
      if (count < 0) throw new Error('out of memory');
      const spans = [];
      for (let i = 0; i < count; ++i) spans.push([pairs[2 * i], pairs[2 * i + 1]]);
      return spans;
    },
  };
}

// 16 kHz mono samples in [-1, 1) from a WAV file: 16-bit PCM mono at
// 16 kHz is read as it is (as the C example reads it); anything else goes
// through the browser's decoder and is mixed down and resampled.
async function decodeAudio(bytes) {
  const data = new DataView(bytes);
  const tag = (at) => String.fromCharCode(...new Uint8Array(bytes, at, 4));
  if (bytes.byteLength >= 12 && tag(0) === 'RIFF' && tag(8) === 'WAVE') {
    let format = null;
    for (let at = 12; at + 8 <= bytes.byteLength;) {
      const id = tag(at), size = data.getUint32(at + 4, true);
      if (id === 'fmt ') {
        format = { tag: data.getUint16(at + 8, true), channels: data.getUint16(at + 10, true),
                   rate: data.getUint32(at + 12, true), bits: data.getUint16(at + 22, true) };
      } else if (id === 'data' && format && format.tag === 1 && format.channels === 1 &&
                 format.rate === RATE && format.bits === 16) {
        const count = Math.min(size, bytes.byteLength - at - 8) >> 1;
        const samples = new Float32Array(count);
        for (let i = 0; i < count; ++i) samples[i] = data.getInt16(at + 8 + 2 * i, true) / 32768;
        return samples;
      }
      at += 8 + size + (size & 1);
    }
  }
  const decoded = await new AudioContext().decodeAudioData(bytes.slice(0));
  const offline = new OfflineAudioContext(1, Math.ceil(decoded.duration * RATE), RATE);
  const source = offline.createBufferSource();
  source.buffer = decoded;
  source.connect(offline.destination);
  source.start();
  return (await offline.startRendering()).getChannelData(0);
}

function seconds(samples) { return (samples / RATE).toFixed(2); }

function draw(samples, probs, spans) {
  const wave = document.getElementById('wave');
  const g = wave.getContext('2d');
  const { width, height } = wave;
  g.clearRect(0, 0, width, height);
  const total = Math.max(samples.length, probs.length * WINDOW, 1);
  g.fillStyle = 'rgba(60, 170, 90, 0.25)';
  for (const [start, end] of spans)
    g.fillRect(start / total * width, 0, (end - start) / total * width, height);
  g.strokeStyle = '#245';
  g.beginPath();
  const step = total / width;
  for (let x = 0; x < width; ++x) {
    let low = 0, high = 0;
    const from = Math.floor(x * step), to = Math.min(samples.length, Math.floor((x + 1) * step));
    for (let i = from; i < to; ++i) { low = Math.min(low, samples[i]); high = Math.max(high, samples[i]); }
    g.moveTo(x + 0.5, height / 2 - high * height / 2);
    g.lineTo(x + 0.5, height / 2 - low * height / 2 + 1);
  }
  g.stroke();

  const trace = document.getElementById('probs');
  const t = trace.getContext('2d');
  t.clearRect(0, 0, trace.width, trace.height);
  t.strokeStyle = '#c33';
  t.setLineDash([4, 4]);
  t.beginPath();
  t.moveTo(0, trace.height / 2);
  t.lineTo(trace.width, trace.height / 2);
  t.stroke();
  t.setLineDash([]);
  t.strokeStyle = '#36c';
  t.beginPath();
  probs.forEach((p, i) => {
    const x = (i * WINDOW + WINDOW / 2) / total * trace.width;
    const y = trace.height - 2 - p * (trace.height - 4);
    if (i === 0) t.moveTo(x, y); else t.lineTo(x, y);
  });
  t.stroke();
}

function show(samples, probs, spans, took) {
  draw(samples, probs, spans);
  const lines = spans.map(([s, e]) => `speech ${seconds(s)} s - ${seconds(e)} s`);
  document.getElementById('spans').textContent = lines.join('\n');
  const status = `${spans.length} speech segment${spans.length === 1 ? '' : 's'} in ` +
    `${seconds(samples.length)} s of audio` +
    (took ? `; ${probs.length} windows in ${(took / 1000).toFixed(3)} s ` +
            `(${(took / Math.max(probs.length, 1)).toFixed(3)} ms each)` : '');
  document.getElementById('status').textContent = status;
  return { spans: lines, status };
}

async function runOn(vad, samples) {
  vad.reset();
  const began = performance.now();
  const probs = [];
  for (let start = 0; start < samples.length; start += WINDOW)
    probs.push(vad.window(samples.subarray(start, Math.min(start + WINDOW, samples.length))));
  const took = performance.now() - began;
  return show(samples, probs, vad.segments(probs, samples.length), took);
}

async function main() {
  const vad = await loadVad('vad.wasm');
  document.getElementById('status').textContent = 'ready';
  const fromFile = async (bytes) => {
    try { await runOn(vad, await decodeAudio(bytes)); }
    catch (e) { document.getElementById('status').textContent = String(e); }
  };
  const drop = document.getElementById('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    if (e.dataTransfer.files.length) await fromFile(await e.dataTransfer.files[0].arrayBuffer());
  });
  document.getElementById('file').addEventListener('change', async (e) => {
    if (e.target.files.length) await fromFile(await e.target.files[0].arrayBuffer());
  });

  // The microphone at 16 kHz: each full window as it arrives, the trace
  // drawn live, the segments of everything heard so far.
  let listening = null;
  const mic = document.getElementById('mic');
  mic.addEventListener('click', async () => {
    if (listening) {
      listening.stop();
      listening = null;
      mic.textContent = 'Listen to the microphone';
      return;
    }
    const media = await navigator.mediaDevices.getUserMedia({ audio: true });
    const context = new AudioContext({ sampleRate: RATE });
    const source = context.createMediaStreamSource(media);
    const node = context.createScriptProcessor(4096, 1, 1);
    // Everything heard, in a buffer that doubles when full; the windows
    // run up to the last whole one.
    let heard = new Float32Array(RATE * 8), length = 0;
    const probs = [];
    vad.reset();
    node.onaudioprocess = (event) => {
      const input = event.inputBuffer.getChannelData(0);
      if (length + input.length > heard.length) {
        const larger = new Float32Array(2 * (length + input.length));
        larger.set(heard.subarray(0, length));
        heard = larger;
      }
      heard.set(input, length);
      length += input.length;
      for (let at = probs.length * WINDOW; at + WINDOW <= length; at += WINDOW)
        probs.push(vad.window(heard.subarray(at, at + WINDOW)));
      const samples = heard.subarray(0, probs.length * WINDOW);
      show(samples, probs, vad.segments(probs, samples.length), 0);
    };
    source.connect(node);
    node.connect(context.destination);
    listening = { stop() { node.disconnect(); media.getTracks().forEach((t) => t.stop()); context.close(); } };
    mic.textContent = 'Stop';
  });

  const wav = new URLSearchParams(location.search).get('wav');
  if (wav) {
    try {
      const bytes = await (await fetch(wav)).arrayBuffer();
      window.vadResult = await runOn(vad, await decodeAudio(bytes));
    } catch (e) {
      window.vadResult = { error: String(e) };
    }
  }
}

window.vadReady = main().catch((e) => {
  document.getElementById('status').textContent = String(e);
  window.vadResult = { error: String(e) };
});
