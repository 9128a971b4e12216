"""python3 -m npvk script.py [args...]: run a script with npvk enabled."""

import os
import runpy
import sys


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: python3 -m npvk script.py [args...]\n"
              "       python3 -m npvk -m module [args...]\n"
              "Runs the program with NumPy's large array work on the Vulkan device.\n"
              "Environment: NPVK_DEVICE, NPVK_MIN_BYTES, NPVK_CACHE_DIR, NPVK_STATS=1",
              file=sys.stderr)
        return 2
    import npvk

    npvk.enable()
    if npvk._stats_requested():
        npvk.report_at_exit()
    if sys.argv[1] == "-m":
        if len(sys.argv) < 3:
            print("python3 -m npvk -m: a module name is missing", file=sys.stderr)
            return 2
        sys.argv = sys.argv[2:]
        runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.argv = sys.argv[1:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))
        runpy.run_path(sys.argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
