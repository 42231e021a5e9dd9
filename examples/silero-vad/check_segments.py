"""Checks the speech segments the Silero VAD example printed against the
expected speech spans of the clip (scripts/make-speech-clip.sh writes them).

Usage: check_segments.py [--tolerance S] CLIP.spans OUTPUT.txt

Passes when every expected span is covered by the segments, except within
the tolerance of its edges, and every segment lies within an expected span
widened by the tolerance (so no segment covers silence). Exits 1 otherwise.
"""

import argparse
import re
import sys

SEGMENT = re.compile(r"^speech (\d+(?:\.\d+)?) s - (\d+(?:\.\d+)?) s$")


def uncovered(span, segments, tolerance):
    """The parts of the span, shrunk by the tolerance, no segment covers."""
    start, end = span[0] + tolerance, span[1] - tolerance
    gaps = []
    for seg_start, seg_end in sorted(segments):
        if seg_end <= start:
            continue
        if seg_start >= end:
            break
        if seg_start > start:
            gaps.append((start, seg_start))
        start = max(start, seg_end)
    if start < end:
        gaps.append((start, end))
    return gaps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tolerance", type=float, default=0.25)
    parser.add_argument("spans")
    parser.add_argument("output")
    args = parser.parse_args()

    with open(args.spans) as f:
        spans = [tuple(map(float, line.split())) for line in f if line.strip()]
    with open(args.output) as f:
        segments = [
            (float(m.group(1)), float(m.group(2)))
            for m in map(SEGMENT.match, f.read().splitlines())
            if m
        ]

    failures = []
    if not segments:
        failures.append("no speech segment was printed")
    for span in spans:
        for gap in uncovered(span, segments, args.tolerance):
            failures.append(
                f"speech {span[0]:.2f}-{span[1]:.2f} s is not covered "
                f"from {gap[0]:.2f} to {gap[1]:.2f} s"
            )
    for seg in segments:
        if not any(
            seg[0] >= span[0] - args.tolerance and seg[1] <= span[1] + args.tolerance
            for span in spans
        ):
            failures.append(
                f"segment {seg[0]:.2f}-{seg[1]:.2f} s covers silence "
                f"(beyond {args.tolerance} s of every expected span)"
            )

    for failure in failures:
        print(f"check: FAIL {failure}")
    if failures:
        return 1
    print(
        f"check: ok, {len(segments)} segments cover the {len(spans)} spoken "
        f"spans and no silence (tolerance {args.tolerance} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
