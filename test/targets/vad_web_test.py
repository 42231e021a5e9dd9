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
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cross  # noqa: E402
import silero  # noqa: E402
from silero import run  # noqa: E402


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
    silero.make_clip(clip)
    print(run([os.path.join(silero.ROOT, "examples", "vad-web", "build.sh"),
               args.tract, args.targets_dir, args.model, site]).strip())
    program = silero.native_example(args.tract, args.runtime, args.model,
                                    os.path.join(args.work, "native"),
                                    cross.RUNTIME_INCLUDE)
    expected = silero.segments(run([program, clip]))

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
