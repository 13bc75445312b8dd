#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The README's quick start runs as written, in sequence, with the mota under test.

usage: test_readme.py MOTA WORK SOURCE_DIR
Exit 0 pass, 1 fail, 77 skipped (no arm-none-eabi-gcc for build-model: prints SKIPPED).
"""
import os
import re
import shutil
import subprocess
import sys

MOTA, WORK, SRC = sys.argv[1:4]
MARK = "<!-- run in sequence by the test readme_quick_start_runs_as_written -->"


def main():
    text = open(os.path.join(SRC, "README.md"), encoding="utf-8").read()
    at = text.find(MARK)
    assert at >= 0, "the README lost its quick start"
    m = re.compile(r"```sh\n(.*?)```", re.S).search(text, at)
    script = m.group(1)
    if shutil.which("arm-none-eabi-gcc") is None:
        print("SKIPPED: build-model needs arm-none-eabi-gcc")
        return 77
    # a root that looks like the repository after scripts/demo.sh: the mota under test where the README says
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(os.path.join(WORK, "build", "release", "host_tool"))
    os.symlink(os.path.abspath(MOTA), os.path.join(WORK, "build", "release", "host_tool", "mota"))
    os.symlink(os.path.join(SRC, "tests"), os.path.join(WORK, "tests"))
    r = subprocess.run(["bash", "-e", "-c", script], cwd=WORK, capture_output=True, text=True, timeout=300)
    print(r.stdout)
    print(r.stderr, file=sys.stderr)
    assert r.returncode == 0, "the quick start failed (exit %d)" % r.returncode
    assert re.search(r"installed: dense seq 1 .*confirmed", r.stdout), "push did not say installed and confirmed"
    assert re.search(r"active: +seq 1 v1\.0\.0, .*confirmed", r.stdout), "status does not show v1 confirmed"
    assert not os.path.exists(os.path.join(WORK, "try", "port.txt")), "the simulator did not end cleanly"
    shutil.rmtree(WORK, ignore_errors=True)
    print("PASS readme_quick_start_runs_as_written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
