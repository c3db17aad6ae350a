"""The test suite's time per file, from a pytest JUnit XML report.

    PYTEST_ADDOPTS="--junitxml=/tmp/suite.xml" bash .ci/run      # or ./run tests --junitxml=...
    python benchmarks/suite_times.py /tmp/suite.xml [--top N]

prints each test file's tests and seconds (setup, call and teardown summed, as JUnit records
them), largest first, and the total: the table docs/testing.md keeps. Module-scoped fixtures
(a build) count in the first test that uses them.
"""

from __future__ import annotations

import argparse
import collections
import xml.etree.ElementTree as ET


def per_file(path: str) -> dict[str, tuple[int, float]]:
    tests: dict[str, int] = collections.Counter()
    seconds: dict[str, float] = collections.defaultdict(float)
    for case in ET.parse(path).getroot().iter("testcase"):
        # classname: tests.test_ops or tests.test_distributed_collectives.TestFooccl
        parts = case.get("classname", "").split(".")
        module = next((i for i, p in enumerate(parts) if p.startswith("test_")), len(parts) - 1)
        name = "/".join(parts[:module + 1]) + ".py"
        tests[name] += 1
        seconds[name] += float(case.get("time", 0))
    return {name: (tests[name], seconds[name]) for name in tests}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit_xml")
    parser.add_argument("--top", type=int, default=25, help="files to list (default 25)")
    args = parser.parse_args()
    files = sorted(per_file(args.junit_xml).items(), key=lambda kv: -kv[1][1])
    total = sum(s for _, (_, s) in files)
    print(f"| file | tests | seconds | share |\n|---|---:|---:|---:|")
    for name, (n, s) in files[:args.top]:
        print(f"| `{name}` | {n} | {s:.1f} | {100 * s / total:.1f}% |")
    rest = files[args.top:]
    if rest:
        print(f"| {len(rest)} other files | {sum(n for _, (n, _) in rest)} | {sum(s for _, (_, s) in rest):.1f} | "
              f"{100 * sum(s for _, (_, s) in rest) / total:.1f}% |")
    print(f"| total | {sum(n for _, (n, _) in files)} | {total:.1f} | |")


if __name__ == "__main__":
    main()
