"""Whole-program use: `python3 -m npvk script.py`, `NPVK=1 python3 script.py`
(npvk-autoload.pth -> npvk_autoload.py), and real crashes under npvk."""

import os
import shutil
import site
import sys
import signal
import textwrap

import pytest

from npvk_testlib import NPVK_PYTHON_DIR, run_python, subprocess_env

# A program that does device-eligible work and prints a digest of its
# results plus what npvk (if loaded) says about itself.
PROGRAM = textwrap.dedent("""
    import hashlib, sys
    import numpy as np

    a = np.arange(100_000, dtype=np.float64) * 0.25
    b = np.sqrt(a) * 3.0 - a[::-1]
    c = np.maximum(b, 0.5) // 2.0
    a += c
    i = np.arange(100_000, dtype=np.int32) * 7 % 1000
    digest = hashlib.sha256(a.tobytes() + b.tobytes() + c.tobytes() + i.tobytes()).hexdigest()
    print("digest", digest)
    print("name", __name__)
    print("argv", sys.argv[1:])
    npvk = sys.modules.get("npvk")
    print("npvk loaded", npvk is not None)
    if npvk is not None:
        print("npvk enabled", npvk.is_enabled())
        print("device ops", npvk.stats()["ops_on_device"])
""")


def _parse(stdout):
    out = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in ("digest", "name", "argv"):
            out[key] = value
        elif line.startswith("npvk loaded"):
            out["loaded"] = line.endswith("True")
        elif line.startswith("npvk enabled"):
            out["enabled"] = line.endswith("True")
        elif line.startswith("device ops"):
            out["device_ops"] = int(line.split()[-1])
    return out


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    path = d / "program.py"
    path.write_text(PROGRAM)
    return path


@pytest.fixture(scope="module")
def plain_result(program):
    proc = run_python([str(program), "x", "--flag"])
    assert proc.returncode == 0, proc.stderr
    res = _parse(proc.stdout)
    assert res["loaded"] is False
    return res


def _check_accelerated(proc, plain_result):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = _parse(proc.stdout)
    assert res["digest"] == plain_result["digest"], "results differ from plain NumPy"
    assert res["enabled"] is True
    assert res["device_ops"] > 0
    return res


def test_python_m_npvk_script(program, plain_result):
    proc = run_python(["-m", "npvk", str(program), "x", "--flag"],
                      env=subprocess_env(NPVK_MIN_BYTES="0"))
    res = _check_accelerated(proc, plain_result)
    assert res["name"] == "__main__"
    assert res["argv"] == "['x', '--flag']"


def test_python_m_npvk_large_min_bytes(program, plain_result):
    """With NPVK_MIN_BYTES far above the program's 800 KB arrays, NumPy's path."""
    proc = run_python(["-m", "npvk", str(program), "x", "--flag"],
                      env=subprocess_env(NPVK_MIN_BYTES=str(64 << 20)))
    assert proc.returncode == 0, proc.stderr
    res = _parse(proc.stdout)
    assert res["digest"] == plain_result["digest"]
    assert res["enabled"] is True
    assert res["device_ops"] == 0


def test_python_m_npvk_sibling_import_and_exit_code(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 41\n")
    (tmp_path / "main.py").write_text(textwrap.dedent("""
        import sys
        import helper
        import numpy as np
        x = np.arange(10) + helper.VALUE
        sys.exit(int(x[1]) - 39)   # 3
    """))
    proc = run_python(["-m", "npvk", str(tmp_path / "main.py")], cwd="/")
    assert proc.returncode == 3, proc.stderr


def test_python_m_npvk_exception_exit_status(tmp_path):
    (tmp_path / "boom.py").write_text("raise KeyError('boom')\n")
    proc = run_python(["-m", "npvk", str(tmp_path / "boom.py")])
    assert proc.returncode == 1
    assert "KeyError: 'boom'" in proc.stderr


def test_python_m_npvk_module(tmp_path, plain_result):
    pkg = tmp_path / "npvkprog"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(PROGRAM)
    proc = run_python(["-m", "npvk", "-m", "npvkprog", "x", "--flag"], cwd=str(tmp_path),
                      env=subprocess_env(NPVK_MIN_BYTES="0"))
    res = _check_accelerated(proc, plain_result)
    assert res["name"] == "__main__"
    assert res["argv"] == "['x', '--flag']"


def test_python_m_npvk_usage():
    proc = run_python(["-m", "npvk"])
    assert proc.returncode == 2
    assert "usage: python3 -m npvk" in proc.stderr
    proc = run_python(["-m", "npvk", "-m"])
    assert proc.returncode == 2


def _site_dir_command(program, argv=("x", "--flag")):
    # npvk-autoload.pth runs only from a site directory: simulate the
    # interpreter's start-up with site.addsitedir, then run the program.
    return ["-c", textwrap.dedent(f"""
        import site, sys, runpy
        site.addsitedir({NPVK_PYTHON_DIR!r})
        sys.argv = [{str(program)!r}] + {list(argv)!r}
        runpy.run_path({str(program)!r}, run_name="__main__")
    """)]


@pytest.mark.parametrize("value", [None, "0", ""])
def test_autoload_off_does_not_import_npvk(program, plain_result, value):
    proc = run_python(_site_dir_command(program), env=subprocess_env(NPVK=value))
    assert proc.returncode == 0, proc.stderr
    res = _parse(proc.stdout)
    assert res["loaded"] is False, "npvk imported although NPVK is unset or 0"
    assert res["digest"] == plain_result["digest"]


def test_autoload_on_enables_npvk(program, plain_result):
    proc = run_python(_site_dir_command(program),
                      env=subprocess_env(NPVK="1", NPVK_MIN_BYTES="0"))
    res = _check_accelerated(proc, plain_result)
    assert res["argv"] == "['x', '--flag']"


def test_autoload_module_import(program, plain_result):
    """NPVK=1 python3 -c 'import npvk_autoload; ...' (what the .pth runs)."""
    code = textwrap.dedent(f"""
        import sys, runpy
        import npvk_autoload
        sys.argv = [{str(program)!r}, "x", "--flag"]
        runpy.run_path({str(program)!r}, run_name="__main__")
    """)
    proc = run_python(["-c", code], env=subprocess_env(NPVK="1", NPVK_MIN_BYTES="0"))
    _check_accelerated(proc, plain_result)
    proc = run_python(["-c", code], env=subprocess_env())
    assert proc.returncode == 0
    assert _parse(proc.stdout)["loaded"] is False


def test_autoload_with_npvk_imported_before_numpy():
    """NPVK=1 and `import npvk` before `import numpy`: npvk's own import
    imports NumPy, whose hook must wait for npvk to be whole, then enable it
    (it said "not enabled: partially initialized module 'npvk'")."""
    code = ("import site\n"
            f"site.addsitedir({NPVK_PYTHON_DIR!r})\n"
            "import npvk\n"
            "import numpy as np\n"
            "print(npvk.is_enabled())\n")
    proc = run_python(["-c", code], env=subprocess_env(NPVK="1"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr
    assert proc.stdout.split() == ["True"]


@pytest.fixture(scope="module")
def user_site(tmp_path_factory):
    """A real site directory (the user site of a private PYTHONUSERBASE)
    holding npvk-autoload.pth, so the interpreter's own start-up runs it. A
    venv processes no user site: there it is the venv's own site-packages,
    where npvk's wheel put the .pth."""
    if sys.prefix != sys.base_prefix:
        if NPVK_PYTHON_DIR not in site.getsitepackages():
            pytest.skip("a venv whose npvk is not installed in it (PYTHONPATH)")
        return subprocess_env()
    base = tmp_path_factory.mktemp("userbase")
    env = subprocess_env(PYTHONUSERBASE=str(base))
    proc = run_python(["-c", "import site; print(site.getusersitepackages())"], env=env)
    site_dir = proc.stdout.strip()
    os.makedirs(site_dir)
    shutil.copy(os.path.join(NPVK_PYTHON_DIR, "npvk-autoload.pth"), site_dir)
    return env


def test_npvk_env_with_real_site_dir(program, plain_result, user_site):
    """NPVK=1 with npvk-autoload.pth in a site directory processed before
    Debian's dist-packages (as /usr/local/lib/python3.11/dist-packages is).
    Up to 638c1f8 the .pth imported NumPy before it was on sys.path: 'npvk:
    not enabled: No module named numpy'."""
    env = dict(user_site, NPVK="1", NPVK_MIN_BYTES="0")
    proc = run_python([str(program), "x", "--flag"], env=env)
    assert "not enabled" not in proc.stderr, proc.stderr
    res = _check_accelerated(proc, plain_result)
    assert res["name"] == "__main__"


def test_real_site_dir_without_npvk_env(program, plain_result, user_site):
    proc = run_python([str(program), "x", "--flag"], env=user_site)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    res = _parse(proc.stdout)
    assert res["loaded"] is False
    assert res["digest"] == plain_result["digest"]


def test_npvk_stats_report_at_exit(program):
    proc = run_python(_site_dir_command(program),
                      env=subprocess_env(NPVK="1", NPVK_MIN_BYTES="0", NPVK_STATS="1"))
    assert proc.returncode == 0, proc.stderr
    device_ops = _parse(proc.stdout)["device_ops"]
    assert device_ops > 0
    summary = [line for line in proc.stderr.splitlines() if line.startswith("npvk: ")]
    assert len(summary) == 1, proc.stderr
    assert f"npvk: {device_ops} " in summary[0]
    assert "kernels compiled" in summary[0]


def test_npvk_stats_with_python_m_npvk(program):
    proc = run_python(["-m", "npvk", str(program)],
                      env=subprocess_env(NPVK_MIN_BYTES="0", NPVK_STATS="1"))
    assert proc.returncode == 0, proc.stderr
    device_ops = _parse(proc.stdout)["device_ops"]
    assert f"npvk: {device_ops} " in proc.stderr


def test_bad_min_bytes_does_not_break_the_program(program, plain_result):
    proc = run_python(_site_dir_command(program),
                      env=subprocess_env(NPVK="1", NPVK_MIN_BYTES="lots"))
    assert proc.returncode == 0, proc.stderr
    assert "npvk: not enabled" in proc.stderr
    assert "NPVK_MIN_BYTES" in proc.stderr
    res = _parse(proc.stdout)
    assert res["digest"] == plain_result["digest"]
    assert res["enabled"] is False


CRASH = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    {setup}
    a = np.arange(100_000, dtype=np.float64)
    b = a * 2.0          # pending device work
    print("value", b[3], flush=True)   # a handled fault on a device-owned page
    npvk = sys.modules.get("npvk")
    print("enabled", bool(npvk and npvk.is_enabled()), flush=True)
    c = a + 1.0          # pending again
    ctypes.string_at(0)  # a real crash
    print("survived", flush=True)
""")


@pytest.mark.parametrize("how", ["plain", "enable", "python_m_npvk", "NPVK=1",
                                 "faulthandler_first", "faulthandler_after"])
def test_real_segfault_still_kills(tmp_path, how):
    setup = {
        "plain": "",
        "enable": "import npvk; npvk.enable(min_bytes=0)",
        "python_m_npvk": "",
        "NPVK=1": "",
        "faulthandler_first": "import faulthandler, npvk; faulthandler.enable(); "
                              "npvk.enable(min_bytes=0)",
        "faulthandler_after": "import faulthandler, npvk; npvk.enable(min_bytes=0); "
                              "faulthandler.enable()",
    }[how]
    script = tmp_path / "crash.py"
    script.write_text(CRASH.format(setup=setup))
    env = subprocess_env(NPVK_MIN_BYTES="0")
    args = [str(script)]
    if how == "python_m_npvk":
        args = ["-m", "npvk", str(script)]
    elif how == "NPVK=1":
        args = _site_dir_command(script, argv=())
        env = subprocess_env(NPVK="1", NPVK_MIN_BYTES="0")
    proc = run_python(args, env=env)
    assert proc.returncode == -signal.SIGSEGV, (proc.returncode, proc.stdout, proc.stderr)
    assert "value 6.0" in proc.stdout
    assert "survived" not in proc.stdout
    if how.startswith("faulthandler"):
        assert "Segmentation fault" in proc.stderr
    assert f"enabled {how != 'plain'}" in proc.stdout
