#!/usr/bin/python3
"""Writes the .npy / .npz fixtures of BundleTest.cpp, as numpy writes them.

Run once from this folder (`/usr/bin/python3 make_fixtures.py`) and commit the
outputs; the unit tests themselves never run Python. The values are chosen so
that the tests can state them: change both together.
"""
import io
import struct
import zipfile

import numpy as np
from numpy.lib import format as npy_format


def arrays():
    return {
        "x": np.arange(6, dtype=np.float32).reshape(2, 3),
        "mask": np.array([True, False, True]),
        "ids": np.array([-1, 0, 2**40], dtype=np.int64),
        "half": np.array([1.0, -2.5, np.inf], dtype=np.float16),
        "scalar": np.array(3.25, dtype=np.float64),
        "empty": np.zeros((0, 4), dtype=np.uint8),
    }


def npy_bytes(array, version=None):
    out = io.BytesIO()
    npy_format.write_array(out, array, version=version, allow_pickle=True)
    return out.getvalue()


def raw_npy(header, data):
    """An NPY 1.0 file with a header written by hand."""
    preamble = len(b"\x93NUMPY") + 4
    padded = -(-(preamble + len(header) + 1) // 64) * 64
    header = header.ljust(padded - preamble - 1) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + data)


def write(name, data):
    with open(name, "wb") as f:
        f.write(data)


def main():
    # What `tract --input-from-bundle` usually gets: numpy's own archives.
    np.savez("numpy_savez.npz", **arrays())
    np.savez_compressed("numpy_savez_compressed.npz", **arrays())

    # The later NPY versions (4-byte header length; 3.0 is UTF-8).
    write("version2.npy", npy_bytes(np.arange(4, dtype="<i4"), (2, 0)))
    write("version3.npy", npy_bytes(np.arange(4, dtype="<u2"), (3, 0)))

    # Arrays the reader refuses.
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    write("fortran_order.npy", npy_bytes(fortran))
    write("big_endian.npy", npy_bytes(np.arange(3, dtype=">f4")))
    write("object.npy", npy_bytes(np.array([1, "a"], dtype=object)))

    # Archives the reader refuses.
    with zipfile.ZipFile("non_npy_member.npz", "w") as z:
        z.writestr("x.npy", npy_bytes(np.arange(3, dtype=np.float32)))
        z.writestr("readme.txt", "not an array\n")

    # A header announcing 2**60 float32s over 16 bytes of data.
    lying = raw_npy("{'descr': '<f4', 'fortran_order': False, "
                    "'shape': (%d,), }" % 2**60, bytes(16))
    with zipfile.ZipFile("absurd_shape.npz", "w") as z:
        z.writestr("x.npy", lying)

    # A member whose zip headers claim about 4 GB when the archive holds 200
    # bytes.
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("x.npy", npy_bytes(np.arange(3, dtype=np.float32)))
    data = bytearray(buffer.getvalue())
    struct.pack_into("<I", data, 22, 0xFFFFFFF0)  # local header
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 0xFFFFFFF0)
    write("absurd_member_size.npz", bytes(data))


if __name__ == "__main__":
    main()
