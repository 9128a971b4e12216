"""Device choice with more than one device: NPVK_DEVICE=local-rank (the
default) puts each process a launcher starts on its own device; wrong
settings give clear errors."""

import json
import os
import subprocess

import numpy as np
import pytest

from npvk_testlib import REPO_ROOT, run_python, subprocess_env
from npvk_two_devices import two_lavapipe_env

RANK_VARS = ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"]

PROGRAM = """
import json, numpy as np, npvk
npvk.enable(min_bytes=0)
a = np.arange(200_000, dtype=np.float64)
b = np.sqrt(a) * 2.0 + a
npvk.sync()
ok = bool(np.array_equal(b, np.sqrt(np.arange(200_000.0)) * 2.0 + np.arange(200_000.0)))
print(json.dumps({"device": npvk.device(), "ops": npvk.stats()["ops_on_device"], "ok": ok}))
"""


@pytest.fixture
def two_devices(tmp_path):
    env = two_lavapipe_env(tmp_path)
    if env is None:
        pytest.skip("no lavapipe manifest under /usr/share/vulkan/icd.d")
    return env


def _run(extra, program=PROGRAM):
    env = subprocess_env(**{v: None for v in RANK_VARS + ["NPVK_DEVICE"]})
    env.update(extra)
    return run_python(["-c", program], env=env)


def _device_of(extra):
    r = _run(extra)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["ops"] > 0, out
    return out["device"]["index"]


def test_npvk_info_lists_two_devices_and_the_ranks_choice(two_devices):
    info = os.path.join(REPO_ROOT, "build", "tools", "npvk-info")
    if not os.path.exists(info):
        pytest.skip("npvk-info is not built in build/tools")
    for rank, chosen in (("0", "[0]"), ("1", "[1]")):
        env = {**subprocess_env(), **two_devices, "OMPI_COMM_WORLD_LOCAL_RANK": rank}
        out = subprocess.run([info], env=env, capture_output=True, text=True, check=True).stdout
        heads = [l for l in out.splitlines() if l.startswith("[")]
        assert len(heads) == 2, out
        assert [h for h in heads if "<- npvk uses this one" in h][0].startswith(chosen), out


def _npvk_info(env, *args):
    info = os.path.join(REPO_ROOT, "build", "tools", "npvk-info")
    if not os.path.exists(info):
        pytest.skip("npvk-info is not built in build/tools")
    return subprocess.run([info, *args], env={**subprocess_env(), **env}, capture_output=True,
                          text=True, check=True).stdout


def test_npvk_info_shows_the_device_of_each_local_rank(two_devices):
    out = _npvk_info({**two_devices, "SLURM_LOCALID": "3"})
    assert "chosen by local rank 3 (SLURM_LOCALID)" in out, out
    table = [l.strip() for l in out.splitlines() if " -> [" in l]
    assert [t.split("   <-")[0].split(" (LLVM")[0] for t in table] == [
        "local rank 0 -> [0] llvmpipe", "local rank 1 -> [1] llvmpipe"], out
    assert table[1].endswith("<- this process (local rank 3)"), out
    doc = json.loads(_npvk_info({**two_devices, "SLURM_LOCALID": "3"}, "--json"))
    assert doc["local_rank"] == {"rank": 3, "variable": "SLURM_LOCALID"}
    assert doc["devices_by_local_rank"] == [0, 1] and doc["selected"] == 1
    # No launcher: no rank, but the table still says what ranks would get.
    doc = json.loads(_npvk_info(two_devices, "--json"))
    assert doc["local_rank"] is None and doc["devices_by_local_rank"] == [0, 1]
    # NPVK_DEVICE naming a device: ranks do not matter, so no table.
    out = _npvk_info({**two_devices, "NPVK_DEVICE": "1", "SLURM_LOCALID": "0"})
    assert "local rank 0 ->" not in out and 'chosen by NPVK_DEVICE="1"' in out, out


@pytest.mark.parametrize("var", RANK_VARS)
def test_local_rank_picks_device_modulo_count(two_devices, var):
    # Rank r -> device r mod 2: ranks 0 and 1 get their own; rank 2 wraps to 0.
    assert [_device_of({**two_devices, var: str(r)}) for r in (0, 1, 2)] == [0, 1, 0]


def test_no_rank_is_device_zero(two_devices):
    assert _device_of(two_devices) == 0


def test_explicit_local_rank_and_index(two_devices):
    assert _device_of({**two_devices, "NPVK_DEVICE": "local-rank", "SLURM_LOCALID": "1"}) == 1
    # An explicit index wins over the launcher's rank.
    assert _device_of({**two_devices, "NPVK_DEVICE": "0", "SLURM_LOCALID": "1"}) == 0


def test_enable_device_argument(two_devices):
    program = PROGRAM.replace("npvk.enable(min_bytes=0)", "npvk.enable(min_bytes=0, device=1)")
    r = _run(two_devices, program)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["device"]["index"] == 1


def test_second_enable_with_another_device_is_an_error(two_devices):
    program = ("import numpy as np, npvk\nnpvk.enable()\na = np.ones(1 << 20)\n"
               "npvk.enable(device=0)\nnpvk.enable(device=1)\n")
    r = _run(two_devices, program)
    assert r.returncode != 0
    assert "bound to device 0" in r.stderr and "since its first array" in r.stderr, r.stderr


# The device is bound at the first managed array, not at enable(): what is set
# until then counts (docs/architecture.md, "Device binding and many devices").

def test_enable_device_before_the_first_array_rebinds(two_devices):
    program = PROGRAM.replace("npvk.enable(min_bytes=0)",
                              "npvk.enable(min_bytes=0)\nnpvk.enable(device=1)")
    r = _run(two_devices, program)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["device"]["index"] == 1


@pytest.mark.parametrize("var, value", [("NPVK_DEVICE", "1"), ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
                                        ("NPVK_LOCAL_RANK", "1")])
def test_environment_set_after_enable_counts(two_devices, var, value):
    program = PROGRAM.replace("npvk.enable(min_bytes=0)",
                              f"npvk.enable(min_bytes=0)\nimport os\nos.environ[{var!r}] = {value!r}")
    r = _run(two_devices, program)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["device"]["index"] == 1


def test_import_with_npvk_1_binds_no_device(two_devices):
    # NPVK=1 enables npvk when NumPy is imported; the device waits for the
    # first array, so the launcher's rank set after import still counts.
    # The device made ahead at import (device 0) is not the one bound then.
    program = ("import npvk_autoload, numpy as np, npvk, os, json\n"
               "bound_at_import = npvk._native.bound()\n"
               "os.environ['SLURM_LOCALID'] = '1'\n"
               "a = np.ones(1 << 20) * 2.0\n"
               "print(json.dumps([bound_at_import, npvk.is_enabled(), npvk.device()['index'],"
               " float(a.sum()), npvk.stats()['device_prepared']]))\n")
    r = _run({**two_devices, "NPVK": "1", "NPVK_PREPARE_DEVICE": "1"}, program)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [False, True, 1, 2.0 * (1 << 20),
                                                             False]


def test_the_device_made_at_import_is_bound_when_still_chosen(two_devices):
    # NPVK=1 NPVK_PREPARE_DEVICE=1 starts making the device at import, on a
    # thread of npvk's own; the first array binds it where nothing changed
    # the choice since.
    program = ("import npvk_autoload, numpy as np, npvk, json\n"
               "a = np.ones(1 << 20) * 2.0\n"
               "print(json.dumps([npvk.device()['index'], float(a.sum()),"
               " npvk.stats()['device_prepared']]))\n")
    r = _run({**two_devices, "NPVK": "1", "NPVK_PREPARE_DEVICE": "1", "SLURM_LOCALID": "1"},
             program)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [1, 2.0 * (1 << 20), True]


def test_asking_for_the_device_before_the_first_array_makes_one_device():
    # npvk.device() binds the device made at import; the first large array
    # then started making a second one (binding had not ended the wait), whose
    # driver threads made this single-threaded program look threaded: every
    # later array got a shared mapping (no huge pages, a 4x slower first
    # flush). A second device brings its driver's threads (lavapipe: 3 or
    # more); the validation layer starts one at the first submission.
    program = ("import npvk_autoload, numpy as np, npvk, json, os, time\n"
               "npvk.device()\n"
               "bound = len(os.listdir('/proc/self/task'))\n"
               "a = np.ones(1 << 22) * 2.0\n"
               "s = float(a.sum())\n"
               "time.sleep(0.5)  # the second device was made on a thread meanwhile\n"
               "later = len(os.listdir('/proc/self/task'))\n"
               "print(json.dumps([s, npvk.stats()['device_prepared'], later - bound]))\n")
    r = _run({"NPVK": "1", "NPVK_PREPARE_DEVICE": "1"}, program)
    assert r.returncode == 0, r.stderr
    s, prepared, new_threads = json.loads(r.stdout.strip().splitlines()[-1])
    assert s == 2.0 * (1 << 22) and prepared is True
    assert new_threads <= 1, new_threads


def test_a_program_that_exits_while_the_device_is_made_exits_cleanly():
    # The driver's own libraries (LLVM) register exit handlers when they load,
    # after any of npvk's: exiting while the device was still being made ran
    # them under the thread making it, which then spun forever. npvk waits
    # for it at Python's exit, before the C library's handlers.
    env = subprocess_env(NPVK="1", NPVK_PREPARE_DEVICE="1")
    for _ in range(10):  # without the wait, about 1 run in 10 hung or aborted
        r = run_python(["-c", "import npvk_autoload, numpy"], env=env, timeout=120)
        assert r.returncode == 0, r.stderr


def test_an_import_only_process_never_loads_the_driver():
    # The device made ahead waits 50 ms before it loads the driver, and a
    # process that ends sooner cancels it at exit. Three tries: one that a
    # loaded machine stalled past 50 ms right after the import may load it.
    env = subprocess_env(NPVK="1", NPVK_PREPARE_DEVICE="1")
    program = ("import npvk_autoload, numpy, npvk\n"
               "loaded = 'libvulkan' in open('/proc/self/maps').read()\n"
               "print(npvk.is_enabled(), loaded)\n")
    outputs = []
    for _ in range(3):
        r = run_python(["-c", program], env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        outputs.append(r.stdout.strip())
    assert "True False" in outputs, outputs


def test_by_default_the_device_is_made_at_binding():
    # Made ahead, the device's driver loaded while the program imported its
    # libraries and slowed those imports by about as much as it saved.
    program = ("import npvk_autoload, numpy as np, npvk, time, json\n"
               "time.sleep(0.2)  # a preparation would have begun by now\n"
               "loaded = 'libvulkan' in open('/proc/self/maps').read()\n"
               "a = np.ones(1 << 20) * 2.0\n"
               "print(json.dumps([loaded, float(a.sum()), npvk.stats()['device_prepared']]))\n")
    r = _run({"NPVK": "1"}, program)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [False, 2.0 * (1 << 20), False]


LAZY_PROGRAM = """
import npvk_autoload, numpy as np, npvk, json, os
def driver_loaded():
    return 'libvulkan' in open('/proc/self/maps').read()
def kind(a):
    return [l.split()[1] for l in open('/proc/self/maps') if int(l.split('-')[0], 16) == a.ctypes.data]
a = np.arange(1 << 20, dtype=np.float64)
at_binding = driver_loaded()
b = np.sqrt(a) * 2.0 + a
recorded = driver_loaded()
total = float(b.sum())
later = np.ones(1 << 20)
m = npvk.cost_model() or {}
print(json.dumps([npvk._native.bound(), at_binding, recorded, driver_loaded(), total,
                  npvk.stats()['flushes'], kind(later), m.get('flushes_awaiting_device')]))
"""


def _lazy_run(cache, **extra):
    # Zero-copy buffers, the default (the suite also runs with NPVK_ZERO_COPY=0,
    # where a context makes its device at once: mirrored buffers need it).
    env = {"NPVK": "1", "NPVK_CACHE_DIR": str(cache), "NPVK_ZERO_COPY": "1", **extra}
    r = _run(env, LAZY_PROGRAM)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_the_device_is_made_when_work_first_needs_it(tmp_path):
    # The first process finds no stored description of the device: it makes
    # the device at binding and stores it. The next, with the same settings,
    # binds without the device (lavapipe's start-up, 30-40 ms) and makes it at
    # its first flush that runs there; its threads are the driver's, so the
    # single-threaded program keeps private mappings.
    a = np.arange(1 << 20, dtype=np.float64)
    expected = float((np.sqrt(a) * 2.0 + a).sum())
    first = _lazy_run(tmp_path)
    assert first[:4] == [True, True, True, True]
    assert list(tmp_path.glob("device-info-*.bin")), "the description was not stored"
    second = _lazy_run(tmp_path)
    assert second[:4] == [True, False, False, True]
    assert second[5] >= 1, second
    assert first[4] == second[4] == pytest.approx(expected, rel=1e-12)
    # The threads the driver starts then are not the program's. (Without the
    # validation layer here: it starts a thread of its own at the first
    # submission, after the device is made, with or without this change.)
    _lazy_run(tmp_path, NPVK_VALIDATION="0")
    unvalidated = _lazy_run(tmp_path, NPVK_VALIDATION="0")
    assert unvalidated[:4] == [True, False, False, True]
    assert unvalidated[6] == ["rw-p"], unvalidated
    # Another setting that chooses the device (here the features it may use)
    # is another fingerprint: made at binding again.
    third = _lazy_run(tmp_path, NPVK_DISABLE_FEATURES="float64")
    assert third[:2] == [True, True]


def test_work_the_cost_model_keeps_on_the_host_never_loads_the_driver(tmp_path):
    # With figures that price the device far above the host, every flush
    # runs with NumPy's loops, and a process that starts from the stored
    # description never loads the driver at all. Where the device would win,
    # it is made once what it would have saved adds up to what making it
    # cost (the stored description's measurement).
    _lazy_run(tmp_path)  # stores the description
    first = _lazy_run(tmp_path, NPVK_COST_MODEL="1")  # measures and stores the figures
    assert first[4] > 0
    (path,) = tmp_path.glob("cost-model-v3-*.txt")
    measured = dict(line.split() for line in path.read_text().splitlines())

    def run_with(**figures):
        path.write_text("".join(f"{k} {figures.get(k, v)}\n" for k, v in measured.items()))
        return _lazy_run(tmp_path, NPVK_COST_MODEL="1")

    r = run_with(device_flush_ns=1e9)
    assert r[:4] == [True, False, False, False], r
    assert r[4] == first[4] and r[6] == ["rw-p"] and r[7] == 0
    # The device a little faster: a flush saves far less than making the
    # device costs (30-40 ms on lavapipe), so it runs on the host, counted.
    device = {"device_flush_ns": 0, "device_dispatch_ns": 0, "device_math_ns": 0,
              "device_ns_per_byte": float(measured["host_ns_per_byte"]) / 1.01}
    r = run_with(**device)
    assert r[:4] == [True, False, False, False] and r[7] >= 1, r
    assert r[4] == first[4]
    # The host far slower: the first flush saves more than that, and makes it.
    r = run_with(host_ns_per_byte=float(measured["host_ns_per_byte"]) * 1e4)
    assert r[:4] == [True, False, False, True] and r[7] == 0, r
    assert r[4] == first[4]


def test_reports_before_binding_do_not_bind(two_devices):
    program = ("import numpy as np, npvk, json\nnpvk.enable(min_bytes=0)\n"
               "s = npvk.stats(); npvk.summary(); npvk.sync(); npvk.profile()\n"
               "print(json.dumps([npvk._native.bound(), s['device_bound'], s['ops_on_device'],"
               " npvk.device()['index'], npvk._native.bound()]))\n")
    r = _run({**two_devices, "NPVK_DEVICE": "1"}, program)
    assert r.returncode == 0, r.stderr
    # npvk.device() binds: it reports the device the first array would get.
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [False, False, 0, 1, True]


def test_enable_with_a_wrong_device_argument_raises_at_once(two_devices):
    r = _run(two_devices, "import npvk\nnpvk.enable(device=2)\n")
    assert r.returncode != 0
    assert "no device has that index (devices: 2" in r.stderr, r.stderr


# A wrong NPVK_DEVICE or rank is found when the device is bound: npvk.device()
# raises, and at the first array npvk says why on stderr and steps aside.
ASK_DEVICE = "import npvk\nnpvk.enable()\nnpvk.device()\n"
FIRST_ARRAY = ("import numpy as np, npvk\nnpvk.enable(min_bytes=0)\n"
               "a = np.arange(1 << 18, dtype=np.float64)\nb = a * 2.0\n"
               "print(npvk.is_enabled(), npvk.stats()['ops_on_device'],"
               " bool((b == np.arange(1 << 18) * 2.0).all()))\n")


@pytest.mark.parametrize("extra, message", [
    ({"NPVK_DEVICE": "2"}, "NPVK_DEVICE=2: no device has that index (devices: 2"),
    ({"NPVK_DEVICE": "no-such-gpu"}, 'no device name contains "no-such-gpu"'),
    ({"OMPI_COMM_WORLD_LOCAL_RANK": "x"}, "OMPI_COMM_WORLD_LOCAL_RANK=x is not a local rank"),
])
def test_wrong_device_settings_are_clear_errors(two_devices, extra, message):
    r = _run({**two_devices, **extra}, ASK_DEVICE)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    r = _run({**two_devices, **extra}, FIRST_ARRAY)
    assert r.returncode == 0, r.stderr
    assert "npvk: not enabled: " in r.stderr and message in r.stderr, r.stderr
    assert r.stdout.split() == ["False", "0", "True"]
