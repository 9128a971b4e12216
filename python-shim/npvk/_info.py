"""The npvk-info console script of the wheel: runs the npvk-info program that
the package carries (npvk/bin), which lists the Vulkan devices and the one
npvk picks. A Unix-prefix install has the program itself on PATH."""

import os
import sys


def main():
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "npvk-info")
    if not os.access(program, os.X_OK):
        print(f"npvk-info: {program} is missing; this npvk was not installed from a wheel",
              file=sys.stderr)
        return 1
    os.execv(program, [program] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
