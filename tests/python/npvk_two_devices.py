"""Two Vulkan devices on a CPU-only machine: a second ICD manifest that points
at a copy of lavapipe's library (the loader de-duplicates one manifest listed
twice, and one library loaded twice), both listed in VK_DRIVER_FILES."""

import glob
import json
import os
import shutil

ICD_DIRS = ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d"]
LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"]


def lavapipe_manifest():
    """The default lavapipe manifest and the library it names, or (None, None)."""
    for d in ICD_DIRS:
        for path in sorted(glob.glob(os.path.join(d, "lvp_icd*.json"))):
            with open(path) as f:
                lib = json.load(f)["ICD"]["library_path"]
            if not os.path.isabs(lib):
                lib = next((os.path.join(l, lib) for l in LIB_DIRS
                            if os.path.exists(os.path.join(l, lib))), None)
            if lib and os.path.exists(lib):
                return path, lib
    return None, None


def two_lavapipe_env(tmpdir):
    """Environment variables that give the loader two lavapipe devices, or None
    when no lavapipe is installed."""
    manifest, lib = lavapipe_manifest()
    if manifest is None:
        return None
    copy = os.path.join(str(tmpdir), "libvulkan_lvp_second.so")
    shutil.copyfile(lib, copy)
    with open(manifest) as f:
        data = json.load(f)
    data["ICD"]["library_path"] = copy
    second = os.path.join(str(tmpdir), "lvp_second_icd.json")
    with open(second, "w") as f:
        json.dump(data, f)
    files = os.pathsep.join([manifest, second])
    return {"VK_DRIVER_FILES": files, "VK_ICD_FILENAMES": files}
