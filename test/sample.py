"""Which part of a long list of cases a test run checks: a sample that turns
with the commit, and shards that CTest schedules side by side.

A column too long to run in full on every commit (the node tests on Vulkan,
under the sanitizers, compiled for CUDA, Metal or the other targets) runs
every Nth case from an offset taken from the commit's hash, so that N
commits in a row check every case once; `scripts/test-full.sh` sets
TRACT_TEST_FULL=1 and every sample is then the whole list. TRACT_SAMPLE_OFFSET
pins the offset (to rerun what a given commit ran). A case left out of a
sample is never reported as passed: the runners report how many cases the
sample held and which.

A shard, `--shard K/N`, is the Kth of N interleaved parts of what is left,
so that CTest can run the parts of one runner on both cores next to the
other tests.
"""
import os
import subprocess

FULL_ENV = "TRACT_TEST_FULL"
OFFSET_ENV = "TRACT_SAMPLE_OFFSET"
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def add_arguments(parser, default=1, what="test"):
    parser.add_argument(
        "--sample", type=int, default=default, metavar="N",
        help="every Nth %s only, from an offset that the commit's hash "
             "chooses (all of them under %s=1)" % (what, FULL_ENV))
    parser.add_argument(
        "--sample-offset", type=int, metavar="K",
        help="start the sample at the Kth %s instead (or %s)" % (
            what, OFFSET_ENV))


def add_shard_argument(parser):
    parser.add_argument(
        "--shard", default="0/1", metavar="K/N",
        help="run the Kth of N interleaved shards of the cases")


def commit():
    """The checkout's commit, or None outside a git checkout."""
    try:
        proc = subprocess.run(["git", "-C", SOURCE_ROOT, "rev-parse", "HEAD"],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


class Sample:
    """Every `every`th case from `offset`; `every` == 1 is the whole list."""

    def __init__(self, every, offset=None):
        self.every = 1 if os.environ.get(FULL_ENV) == "1" else max(1, every)
        self.commit = None
        if offset is None and os.environ.get(OFFSET_ENV, "") != "":
            offset = int(os.environ[OFFSET_ENV])
        if offset is None:
            self.commit = commit()
            offset = int(self.commit, 16) if self.commit else 0
        self.offset = offset % self.every

    @classmethod
    def from_args(cls, args):
        return cls(args.sample, args.sample_offset)

    @property
    def full(self):
        return self.every == 1

    def holds(self, index):
        return index % self.every == self.offset

    def pick(self, cases):
        return [case for index, case in enumerate(cases) if self.holds(index)]

    def describe(self, what="test"):
        """'every 8th test, offset 3, commit 1a2b3c4', or 'every test'."""
        if self.full:
            return "every %s" % what
        where = ", commit %s" % self.commit[:7] if self.commit else ""
        return "every %s %s, offset %d%s" % (
            ordinal(self.every), what, self.offset, where)


def ordinal(n):
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return "%d%s" % (n, suffix)


def shard(cases, spec):
    """The cases of shard `spec` ("K/N")."""
    index, count = (int(part) for part in spec.split("/"))
    if not 0 <= index < count:
        raise SystemExit("--shard %s: K must be in 0..N-1" % spec)
    return cases[index::count]
