"""``python -m torch_foo <command>``: small tools shipped with the package."""

import sys

USAGE = """usage: python -m torch_foo <command>

commands:
  demo    train a small MLP on the CPU and on foo:0 side by side and compare the losses
"""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["demo"] and len(argv) == 1:
        from torch_foo import demo

        return demo.main()
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE, end="")
        return 0
    if argv:
        print(f"torch_foo: unknown command {' '.join(argv)!r}", file=sys.stderr)
    print(USAGE, end="", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
