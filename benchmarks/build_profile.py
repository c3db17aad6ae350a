"""Where a build's time went, from Ninja's own log: wall time, CPU seconds per group, top units.

    python benchmarks/build_profile.py [BUILD_DIR] [--top N] [--all]

BUILD_DIR defaults to the one `build/*/` directory. The log holds every build ever run in that
directory; Ninja appends entries in completion order, so a build starts where an entry ends
before the one above it. Only the last build is read unless --all is given (then every entry,
the last time each output was built). Job seconds are CPU seconds when Ninja runs one job per core
(./run sets CMAKE_BUILD_PARALLEL_LEVEL so); with more jobs than cores they overlap, so read the
groups as shares of the CPU spent, and the wall figure as the build's length.
"""

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

# (group, pattern on the output path): first match wins.
GROUPS = [
    ("nvcc: kernels for the cuda target", r"_cuda\.dir/"),
    ("sim: generated pointwise kernels", r"_sim\.dir/.*(generated_pointwise_|unity_sim_pointwise)"),
    ("sim: hand-written kernels", r"_sim\.dir/"),
    ("host: generated pointwise glue", r"/pointwise/.*\.cpp\.o$|unity_pointwise"),
    ("host: generated registrations", r"RegisterFoo_|FooCustomOps|FooPythonOps"),
    ("host: precompiled header", r"cmake_pch"),
    ("host: csrc/aten", r"csrc/aten/"),
    ("host: csrc/runtime, sim, driver", r"csrc/(runtime|sim)/"),
    ("host: csrc/python, distributed", r"csrc/(python|distributed)/"),
    ("link", r"\.so$|\.a$"),
    ("codegen and other steps", r""),
]


def read_builds(log):
    """The log's entries as builds: lists of (start_ms, end_ms, output)."""
    lines = log.read_text().splitlines()
    if not lines or not lines[0].startswith("# ninja log"):
        sys.exit(f"{log}: not a Ninja log")
    builds, last_end, seen = [[]], -1, set()
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) < 5:
            continue
        start, end, output, cmd = int(fields[0]), int(fields[1]), fields[3], fields[4]
        if end < last_end:
            builds.append([])
            seen = set()
        last_end = end
        # One command with many outputs (codegen) is logged once per output: count it once.
        if (start, end, cmd) in seen:
            continue
        seen.add((start, end, cmd))
        builds[-1].append((start, end, output))
    return [b for b in builds if b]


def group_of(output):
    for name, pattern in GROUPS:
        if re.search(pattern, output):
            return name
    return GROUPS[-1][0]


def report(entries, top, one_build):
    cpu = sum(e - s for s, e, _ in entries) / 1000
    if one_build:
        wall = (max(e for _, e, _ in entries) - min(s for s, _, _ in entries)) / 1000
        print(f"jobs {len(entries)}   wall {wall:.1f} s   job seconds {cpu:.1f} s "
              f"(parallelism {cpu / wall if wall else 0:.2f})")
    else:  # start times of different builds share no clock
        print(f"jobs {len(entries)}   job seconds {cpu:.1f} s")
    groups = defaultdict(lambda: [0, 0.0])
    for s, e, out in entries:
        g = groups[group_of(out)]
        g[0] += 1
        g[1] += (e - s) / 1000
    print(f"\n{'group':40} {'jobs':>5} {'seconds':>8} {'share':>6}")
    for name, (n, sec) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:40} {n:5d} {sec:8.1f} {100 * sec / cpu if cpu else 0:5.1f}%")
    print(f"\ntop {top} units")
    for s, e, out in sorted(entries, key=lambda x: x[0] - x[1])[:top]:
        print(f"{(e - s) / 1000:7.1f} s  {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", nargs="?")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--all", action="store_true", help="every output's last build, not the last build")
    args = ap.parse_args()
    if args.build_dir:
        build_dir = Path(args.build_dir)
    else:
        dirs = sorted(Path(__file__).resolve().parents[1].glob("build/*/.ninja_log"))
        if len(dirs) != 1:
            sys.exit("name the build directory: found " + (", ".join(map(str, dirs)) or "none"))
        build_dir = dirs[0].parent
    builds = read_builds(build_dir / ".ninja_log")
    if not builds:
        sys.exit("the log is empty")
    if args.all:
        last = {}
        for b in builds:
            for s, e, out in b:
                last[out] = (s, e, out)
        entries = list(last.values())
    else:
        entries = builds[-1]
    report(entries, args.top, not args.all)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # | head
        sys.exit(0)
