#!/usr/bin/env python3
"""The VAD web page (examples/vad-web) in headless Chromium: the page is
built (Silero VAD v5 compiled to wasm32), served over HTTP from this
process, and opened on the espeak-ng clip of the main job
(`index.html?wav=speech.wav`); the speech spans it prints must be the
native example's, and a screenshot of it is saved in the work folder
(screenshot.png).

Exits 77 (skipped) when Chromium, Node or the wasm32 runtime is missing.
"""
import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cross  # noqa: E402

EXAMPLE = os.path.join(ROOT, "examples", "silero-vad")
FACTS = ["-i", "input:1,576,f32", "-i", "state:2,1,128,f32",
         "-i", "sr:i64=16000"]


def run(command):
    proc = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout.decode(errors="replace") +
                         proc.stderr.decode(errors="replace"))
        raise SystemExit("failed (%d): %s" % (proc.returncode,
                                              " ".join(command)))
    return proc.stdout.decode()


class Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map,
                          **{".wasm": "application/wasm",
                             ".js": "text/javascript"})

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tract", required=True)
    parser.add_argument("--runtime", required=True,
                        help="the host's libtract_runtime.a")
    parser.add_argument("--targets-dir", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()

    browser = os.environ.get("CHROMIUM", "chromium")
    reason = cross.missing(args.targets_dir, "wasm32")
    if not shutil.which(browser):
        reason = "%s is not installed (scripts/setup.sh installs it)" % browser
    if reason:
        print("not run: " + reason)
        return 77

    site = os.path.join(args.work, "site")
    os.makedirs(site, exist_ok=True)
    clip = os.path.join(site, "speech.wav")
    run([os.path.join(ROOT, "scripts", "make-speech-clip.sh"), clip])
    print(run([os.path.join(ROOT, "examples", "vad-web", "build.sh"),
               args.tract, args.targets_dir, args.model, site]).strip())

    # The native example's spans.
    native = os.path.join(args.work, "native")
    os.makedirs(native, exist_ok=True)
    run([args.tract] + FACTS + [args.model, "compile", "-o",
        os.path.join(native, "silero.o"), "--header",
        os.path.join(native, "silero.h"), "--name", "silero"])
    program = os.path.join(native, "silero-vad")
    run(["cc", "-std=c11", "-O2", "-I" + cross.RUNTIME_INCLUDE,
         "-I" + native, os.path.join(EXAMPLE, "main.c"),
         os.path.join(EXAMPLE, "vad.c"), os.path.join(native, "silero.o"),
         args.runtime, "-lm", "-o", program])
    expected = [line for line in run([program, clip]).splitlines()
                if line.startswith("speech ")]

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/index.html?wav=speech.wav" % server.server_port
    screenshot = os.path.join(args.work, "screenshot.png")
    try:
        out = run(["node", os.path.join(HERE, "browser.mjs"), url,
                   screenshot])
    finally:
        server.shutdown()
    result = json.loads(out)
    if not result or "error" in result:
        print("the page failed: %s" % result)
        return 1
    print("page: %s" % result["status"])
    for line in result["spans"]:
        print("  " + line)
    print("screenshot: %s" % screenshot)
    if result["spans"] != expected:
        print("the native example printed:")
        for line in expected:
            print("  " + line)
        return 1
    print("the page's spans are the native example's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
