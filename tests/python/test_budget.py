"""The device memory budget (NPVK_DEVICE_MEMORY_BUDGET, docs/architecture.md
"Memory"): with mirrored buffers (NPVK_ZERO_COPY=0, the discrete-GPU path), a
NumPy loop whose arrays are several times the budget evicts device copies to
the host pages, finishes with NumPy's results exactly, and never holds more
device memory than the budget. Both options are read when the context is
created, hence a subprocess."""

import json
import textwrap

from npvk_testlib import run_python, subprocess_env

MIB = 1 << 20

# Ten 2 MiB arrays, each updated from itself and its neighbour for 20 steps,
# in place and through temporaries; device memory held and RSS after each step.
PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import npvk

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096

    def run(arrays, steps, after_step):
        n = len(arrays)
        for step in range(steps):
            for i in range(n):
                nxt = arrays[(i + 1) % n]
                np.multiply(arrays[i], 0.5, out=arrays[i])
                np.add(arrays[i], nxt, out=arrays[i])
                arrays[i] = arrays[i] * 0.75 + (nxt - 1.0)
            after_step()
        return arrays

    count, elements, steps = 10, (2 << 20) // 8, int(sys.argv[1])
    init = [np.arange(elements, dtype=np.float64) % 1000 * 0.125 + i for i in range(count)]
    expected = run([a.copy() for a in init], steps, lambda: None)

    npvk.enable(min_bytes=0)
    held, rss_after = [], []
    def after_step():
        held.append(npvk.stats()["device_bytes_held"])
        rss_after.append(rss())
    actual = run([np.array(a) for a in init], steps, after_step)
    npvk.sync()
    equal = all(np.array_equal(a, e) for a, e in zip(actual, expected))
    stats = npvk.stats()
    print(json.dumps({"equal": equal, "held": held, "rss": rss_after,
                      **{k: stats[k] for k in ("evictions", "bytes_evicted", "budget_flushes",
                                               "budget_overruns", "device_bytes_peak",
                                               "device_memory_budget", "bytes_to_device",
                                               "bytes_to_host")}}))
""")


def _run(steps, **env):
    proc = run_python(["-c", PROGRAM, str(steps)], env=subprocess_env(**env), timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_working_set_several_times_the_budget_evicts_and_matches_numpy():
    budget = 6 * MIB  # three of the ten arrays
    r = _run(20, NPVK_ZERO_COPY="0", NPVK_DEVICE_MEMORY_BUDGET="6M")
    assert r["device_memory_budget"] == budget
    assert r["equal"], "results differ from NumPy's"
    assert r["evictions"] > 0
    assert r["bytes_evicted"] >= r["evictions"] * 2 * MIB
    assert r["budget_overruns"] == 0
    # Flat: the device copies held never exceed the budget, after any step
    # or at any moment in between.
    assert max(r["held"]) <= budget, r["held"]
    assert r["device_bytes_peak"] <= budget
    # RSS does not grow with the steps once the loop is warm (kernels built,
    # spare mappings cached): a leak of one array per step would add 40 MiB.
    rss = r["rss"]
    assert max(rss[5:]) - rss[5] < 16 * MIB, [x // MIB for x in rss]


def test_default_budget_holds_the_working_set_without_evicting():
    """Guards the test above: the evictions come from the budget variable."""
    r = _run(2, NPVK_ZERO_COPY="0", NPVK_DEVICE_MEMORY_BUDGET=None)
    assert r["equal"]
    assert r["evictions"] == 0
    assert r["device_memory_budget"] > 20 * MIB


def test_zero_copy_holds_no_device_copies():
    """In zero-copy mode the device works on the host pages: nothing to count
    or evict, whatever the budget."""
    r = _run(2, NPVK_ZERO_COPY=None, NPVK_DEVICE_MEMORY_BUDGET="1M")
    assert r["equal"]
    assert r["evictions"] == 0
    assert max(r["held"]) == 0
