#!/usr/bin/env python3
"""Lists the images of each CUDA fatbin in a file (an object that embeds
them): one line per image, its kind (elf: a cubin, ptx) and its chip
(sm_80), from the fatbin's headers."""
import struct
import sys

MAGIC = struct.pack("<I", 0xBA55ED50)


def images(path):
    """The (kind, chip) of each image of each fatbin in the file `path`."""
    found = []
    data = open(path, "rb").read()
    start = data.find(MAGIC)
    while start >= 0:
        _, _, header, size = struct.unpack_from("<IHHQ", data, start)
        entry, end = start + header, start + header + size
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from(
                "<HHIQ", data, entry)
            chip = struct.unpack_from("<I", data, entry + 28)[0]
            found.append(({1: "ptx", 2: "elf"}.get(kind, str(kind)),
                          "sm_%d" % chip))
            entry += entry_header + payload
        start = data.find(MAGIC, end)
    return found


def main():
    found = images(sys.argv[1])
    for kind, chip in found:
        print(kind, chip)
    if not found:
        print("no fatbin")


if __name__ == "__main__":
    main()
