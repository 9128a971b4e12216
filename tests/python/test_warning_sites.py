"""The FP warnings of deferred device work are NumPy's: as many, with the
category, message, file, line and module of the call that caused them, given
before the program exits whether or not the result is read.

Each program runs as a subprocess plain and under npvk (`python3 -m npvk`, at
the default threshold and forced with NPVK_MIN_BYTES=0), and the warnings
printed on stderr (file:line: category: message) are compared.
"""

import os
import re
import textwrap

import pytest

from npvk_testlib import run_python, subprocess_env

_WARNING = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<category>\w+): (?P<message>.*)$")

MODES = {
    "default": {},
    "forced": {"NPVK_MIN_BYTES": "0"},
}


def _warnings(stderr, tmp_path):
    found = []
    for line in stderr.splitlines():
        m = _WARNING.match(line)
        if m:
            found.append((m["file"].replace(str(tmp_path) + "/", ""), int(m["line"]),
                          m["category"], m["message"]))
    return found


def _run(tmp_path, program, npvk_env, args=(), files=None):
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(program))
    if npvk_env is None:
        cmd, env = list(args) + [str(path)], subprocess_env()
    else:
        cmd, env = list(args) + ["-m", "npvk", str(path)], subprocess_env(**npvk_env)
    if env.get("NPVK_CACHE_DIR"):  # the suite's kernels, from the program's directory too
        env["NPVK_CACHE_DIR"] = os.path.abspath(env["NPVK_CACHE_DIR"])
    proc = run_python(cmd, env=env, cwd=str(tmp_path))
    return proc, _warnings(proc.stderr, tmp_path)


def _compare(tmp_path, program, mode, args=(), files=None, expect=None):
    plain, plain_warnings = _run(tmp_path, program, None, args, files)
    assert plain.returncode == 0, plain.stderr
    if expect is not None:  # the program says what NumPy gives
        assert plain_warnings == expect, plain.stderr
    ours, our_warnings = _run(tmp_path, program, MODES[mode], args, files)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == plain.stdout, ours.stderr
    assert our_warnings == plain_warnings, ours.stderr
    return plain_warnings


PRELUDE = """\
import sys, warnings
import numpy as np
a = np.zeros(2_000_000)
"""

DIVIDE = "divide by zero encountered in log"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ending", ["print('done')", "del b\nprint('done')", "sys.exit(0)"])
def test_warning_of_an_unread_result_is_given(tmp_path, mode, ending):
    """The last op's warning, whose result nobody reads, before the exit."""
    _compare(tmp_path, PRELUDE + "b = np.log(a)\n" + ending + "\n", mode,
             expect=[("prog.py", 4, "RuntimeWarning", DIVIDE)])


@pytest.mark.parametrize("mode", MODES)
def test_warning_names_the_line_of_its_call(tmp_path, mode):
    """Reported by a later call, a warning still names the line that caused it."""
    _compare(tmp_path, PRELUDE + """\
b = np.log(a)
c = np.sqrt(a + 1.0)
d = 1.0 / a
e = c * 2.0
print(float(e[0]), float(b[0]), float(d[0]))
""", mode, expect=[("prog.py", 4, "RuntimeWarning", DIVIDE),
                   ("prog.py", 6, "RuntimeWarning", "divide by zero encountered in divide")])


@pytest.mark.parametrize("mode", MODES)
def test_warning_names_the_module_of_its_call(tmp_path, mode):
    """From another module: its file and line, and its module for filters."""
    helper = """\
import numpy as np

def f(a):
    return np.log(a)
"""
    program = PRELUDE + """\
import helper
warnings.filterwarnings("ignore", module="helper2")
b = helper.f(a)
c = a + 1.0
print(float(c[0]), float(b[0]))
"""
    _compare(tmp_path, program, mode, files={"helper.py": helper, "helper2.py": helper},
             expect=[("helper.py", 4, "RuntimeWarning", DIVIDE)])
    # A module filter that ignores the helper's warnings ignores them under
    # npvk too (the report comes from __main__'s later line).
    _compare(tmp_path, program.replace("import helper\n", "import helper2 as helper\n"), mode,
             files={"helper.py": helper, "helper2.py": helper}, expect=[])


@pytest.mark.parametrize("mode", MODES)
def test_each_call_warns_under_always(tmp_path, mode):
    """One warning per call, as NumPy: on separate lines, in a loop, and two
    identical ops in one flush."""
    _compare(tmp_path, PRELUDE + """\
warnings.simplefilter("always")
b = np.log(a + 0.0)
c = np.log(a + 0.0)
d = np.log(a + 0.0)
for i in range(3):
    e = np.log(a + i * 0)
f = np.log(a)
g = np.log(a)
print(float(b[0] + c[0] + d[0] + e[0] + f[0] + g[0]))
""", mode, expect=[("prog.py", 5, "RuntimeWarning", DIVIDE), ("prog.py", 6, "RuntimeWarning", DIVIDE),
                   ("prog.py", 7, "RuntimeWarning", DIVIDE)] +
        [("prog.py", 9, "RuntimeWarning", DIVIDE)] * 3 +
        [("prog.py", 10, "RuntimeWarning", DIVIDE), ("prog.py", 11, "RuntimeWarning", DIVIDE)])


@pytest.mark.parametrize("mode", MODES)
def test_once_per_location_under_the_default_filters(tmp_path, mode):
    """The registry of the call's module: a loop warns once, as NumPy."""
    _compare(tmp_path, PRELUDE + """\
for i in range(3):
    b = np.log(a + i * 0)
print(float(b[0]))
""", mode, expect=[("prog.py", 5, "RuntimeWarning", DIVIDE)])


@pytest.mark.parametrize("mode", MODES)
def test_a_reduction_warns_at_its_line(tmp_path, mode):
    # NumPy's warning names the line in numpy's _methods.py that calls
    # add.reduce (the innermost Python frame), not npvk's wrapper.
    found = _compare(tmp_path, PRELUDE + """\
x = np.full(2_000_000, 1e308)
s = x.sum()
c = a + 1.0
print(float(c[0]), s)
""", mode)
    assert [w[2:] for w in found] == [("RuntimeWarning", "overflow encountered in reduce")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("mutated", [True, False], ids=["filters_mutated", "edit_only"])
def test_error_filter_added_by_editing_the_filters_raises_at_the_op(tmp_path, mode, mutated):
    """A library that inserts an "error" filter into warnings.filters itself."""
    _compare(tmp_path, PRELUDE + f"""\
c = a + 1.0
warnings.filters.insert(0, ("error", None, RuntimeWarning, None, 0))
{"warnings._filters_mutated()" if mutated else "pass"}
try:
    b = np.log(a)
    print("no error")
except RuntimeWarning as e:
    print("raised", e)
print(float(c[0]))
""", mode, expect=[])


@pytest.mark.parametrize("mode", MODES)
def test_warning_handler_that_calls_ufuncs(tmp_path, mode):
    """showwarning runs Python code that records device work itself while
    npvk reports: every warning still comes once, at its own line."""
    _compare(tmp_path, PRELUDE + """\
def show(message, category, filename, lineno, file=None, line=None):
    total = float(np.sqrt(a + 1.0).sum())
    print(f"{filename.rsplit('/', 1)[-1]}:{lineno}: {category.__name__}: {message} {total}")
warnings.showwarning = show
warnings.simplefilter("always")
b = np.log(a)
c = 1.0 / a
d = np.log(a)
print(float(b[0] + c[0] + d[0]))
""", mode)
