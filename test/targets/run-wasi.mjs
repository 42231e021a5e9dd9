// Runs a WebAssembly command (wasm32-wasi) under Node's WASI, as qemu-user
// runs the ARM programs: `node run-wasi.mjs PROGRAM.wasm ARGS...`. The file
// system is the host's, from /, and the exit code is the program's.
import { readFile } from 'node:fs/promises';
import { argv, env, exit } from 'node:process';
import { WASI } from 'node:wasi';

const [program, ...args] = argv.slice(2);
const wasi = new WASI({
  version: 'preview1',
  args: [program, ...args],
  env,
  preopens: { '/': '/' },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(program));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
