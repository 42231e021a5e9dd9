#!/usr/bin/env python3
"""Writes the seed corpus of the NNEF loader's fuzz target
(test/fuzz/corpus/nnef): the NNEF frontend tests' models as tar archives
(one gzipped), with their tensor files, so that mutations reach the
container reader, the .dat and .quant decoders and the importer's ops. Run
it with /usr/bin/python3 after changing it and commit what it writes."""
import io
import os
import shutil
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
NNEF_TESTS = os.path.join(HERE, "..", "frontends", "nnef")
OUT = os.path.join(HERE, "corpus", "nnef")
sys.path.insert(0, NNEF_TESTS)
import make_nnef  # noqa: E402

# Models made with their tensor files by the frontend tests' script.
BUILT = ["conv_matmul", "ops", "dtypes", "stdops", "tract_style",
         "torch_style", "tract_files", "sdpa", "tract_gru", "tract_stft",
         "gdn", "stream_table", "quantized"]
# Text-only models, taken as they are.
TEXT = ["fragment_external", "quant", "scan_state", "shape_subscript",
        "text_layout", "text_quant"]


def write_archive(folder, path):
    gzipped = path.endswith("gz")
    with tarfile.open(path, "w:gz" if gzipped else "w") as tar:
        for root, _, files in os.walk(folder):
            for name in sorted(files):
                if not name.endswith((".nnef", ".dat", ".quant")):
                    continue
                full = os.path.join(root, name)
                data = open(full, "rb").read()
                info = tarfile.TarInfo(os.path.relpath(full, folder))
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        end = tar.offset
    if not gzipped:
        # The two zero blocks that end an archive, without the padding to a
        # whole record: bytes the fuzzer would mutate for nothing.
        with open(path, "r+b") as f:
            f.truncate(end + 1024)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    with tempfile.TemporaryDirectory() as scratch:
        for name in BUILT:
            folder = os.path.join(scratch, name)
            getattr(make_nnef, name)(folder)
            suffix = ".tgz" if name == "conv_matmul" else ".tar"
            write_archive(folder, os.path.join(OUT, name + suffix))
    for name in TEXT:
        write_archive(os.path.join(NNEF_TESTS, "Inputs", name),
                      os.path.join(OUT, name + ".tar"))


if __name__ == "__main__":
    main()
