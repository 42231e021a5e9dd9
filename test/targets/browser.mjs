// Opens a page in headless Chromium, waits for it to settle the promise
// `window.vadReady`, prints `window.vadResult` as JSON and saves a
// screenshot: `node browser.mjs URL SCREENSHOT.png`. It drives the browser
// over the DevTools protocol on a pipe (--remote-debugging-pipe: commands
// on fd 3, replies on fd 4, each message ended by a NUL byte), so that it
// needs nothing but Node and the browser.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argv, exit } from 'node:process';

const [url, screenshot] = argv.slice(2);
const browserPath = process.env.CHROMIUM || 'chromium';
const profile = mkdtempSync(join(tmpdir(), 'vad-web-'));
const browser = spawn(browserPath, [
  '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--remote-debugging-pipe', `--user-data-dir=${profile}`,
  '--window-size=1280,720', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
browser.stderr.on('data', (chunk) => { stderr += chunk; });

let nextId = 1;
const waiting = new Map();
let buffered = '';
browser.stdio[4].on('data', (chunk) => {
  buffered += chunk.toString();
  let end;
  while ((end = buffered.indexOf('\0')) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    const pending = waiting.get(message.id);
    if (!pending) continue;
    waiting.delete(message.id);
    if (message.error) pending.reject(new Error(JSON.stringify(message.error)));
    else pending.resolve(message.result);
  }
});
function send(method, params = {}, sessionId = undefined) {
  const id = nextId++;
  browser.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const { targetId } = await send('Target.createTarget', { url });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const evaluate = async (expression) => {
    const { result, exceptionDetails } = await send('Runtime.evaluate', {
      expression, awaitPromise: true, returnByValue: true }, sessionId);
    if (exceptionDetails) throw new Error(JSON.stringify(exceptionDetails));
    return result.value;
  };
  // The page defines vadReady once its script runs.
  for (let tries = 0; await evaluate('typeof window.vadReady') !== 'object'; ++tries) {
    if (tries > 300) throw new Error('the page never defined window.vadReady');
    await sleep(100);
  }
  const result = await evaluate('window.vadReady.then(() => JSON.stringify(window.vadResult || null))');
  const { data } = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
  writeFileSync(screenshot, Buffer.from(data, 'base64'));
  console.log(result);
}

const timeout = setTimeout(() => {
  console.error('browser.mjs: timed out\n' + stderr);
  browser.kill('SIGKILL');
  exit(1);
}, 120000);
let status = 0;
try {
  await main();
} catch (e) {
  console.error('browser.mjs: ' + e.message + '\n' + stderr);
  status = 1;
}
clearTimeout(timeout);
try { await send('Browser.close'); } catch (e) { /* already gone */ }
await Promise.race([new Promise((resolve) => browser.on('exit', resolve)), sleep(5000)]);
browser.kill('SIGKILL');
rmSync(profile, { recursive: true, force: true });
exit(status);
