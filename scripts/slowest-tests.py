#!/usr/bin/env python3
"""Prints the N slowest tests of JUnit XML reports (lit's
--xunit-xml-output, ctest's --output-junit): seconds, runner, name.

Usage: slowest-tests.py N REPORT.xml...
"""
import os
import sys
import xml.etree.ElementTree as ET


def main():
    count, reports = int(sys.argv[1]), sys.argv[2:]
    times = []
    for report in reports:
        if not os.path.isfile(report):
            continue
        runner = "lit" if "lit" in os.path.basename(report) else "ctest"
        for case in ET.parse(report).getroot().iter("testcase"):
            name = case.get("name", "")
            if runner == "lit" and case.get("classname"):
                # lit: classname "suite.folder", name "file.mlir".
                folder = case.get("classname").partition(".")[2]
                name = "%s/%s" % (folder.replace(".", "/"), name) \
                    if folder else name
            times.append((float(case.get("time") or 0), runner, name))
    for seconds, runner, name in sorted(times, reverse=True)[:count]:
        print("%7.1f s  %-5s %s" % (seconds, runner, name))


if __name__ == "__main__":
    main()
