#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The board registry (ports/boards.txt), through the build:

  test_registry.py ROOT WORK named      every board of the registry is named in at most 3 files outside its
                                        folder, docs/ and tests/ (the registry, its device profile, one more)
  test_registry.py ROOT WORK new-board  a copy of the tree with one new board of an existing family (a copy
                                        of an386's folder, renamed inside it) and its one line in the
                                        registry: its firmware cross-builds, `mota sim --target` and
                                        `mota provision --target` take it, and the board test list has it;
                                        without the line, none of that (the registry is the only list)

Exit 0 when the check holds, 1 when not, 77 (skipped) where the cross toolchain or its dependencies are missing.
"""
import os
import re
import shutil
import subprocess
import sys

SKIP = 77


def registry(root):
    rows = []
    for line in open(os.path.join(root, "ports", "boards.txt"), encoding="utf-8"):
        f = line.split()
        if f and not line.startswith("#") and len(f) == 5:
            rows.append(f)
    return rows


def tracked(root):
    return subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"], capture_output=True,
                          text=True, check=True).stdout.split()


def named(root):
    """Files outside a board's folder, docs/, tests/ and the README that name it, for every board. A board
    of the same family built on it (netduinoplus2 runs the nucleo-f401re port) names it in its own folder:
    that costs the other board's line, not this one's."""
    files = [f for f in tracked(root) if os.path.isfile(os.path.join(root, f))]
    worst, ok = 0, True
    boards = list(registry(root))
    for board, family, *_ in boards:
        word = re.compile(r"(?<![A-Za-z0-9_-])%s(?![0-9])" % re.escape(board))
        folder = "ports/%s/%s/" % (family, board)
        siblings = tuple("ports/%s/%s/" % (fam, b) for b, fam, *_ in boards if fam == family and b != board)
        hits = []
        for f in files:
            if f.startswith((folder, "docs/", "tests/") + siblings) or f == "README.md":
                continue
            try:
                text = open(os.path.join(root, f), encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            if word.search(text):
                hits.append(f)
        worst = max(worst, len(hits))
        print(f"{board}: named in {len(hits)} files outside {folder}, docs/ and tests/: {', '.join(hits)}")
        if len(hits) > 3:
            ok = False
            print(f"FAIL {board}: more than 3")
    return 0 if ok else 1


def run(cmd, cwd=None, env=None):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def copy_tree(root, dst):
    for f in tracked(root):
        src = os.path.join(root, f)
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.join(dst, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, f))
    # the pinned device dependencies, unpacked by scripts/fetch-cross-deps.sh: shared, not copied
    os.symlink(os.path.join(root, ".deps"), os.path.join(dst, ".deps"))


def add_board(tree, name, like="an386"):
    """A new board of the MPS family as a firmware team adds one: its folder (a copy, renamed inside), and
    its line in the registry."""
    src, dst = os.path.join(tree, "ports", "mps", like), os.path.join(tree, "ports", "mps", name)
    shutil.copytree(src, dst)
    os.rename(os.path.join(dst, like + ".ld"), os.path.join(dst, name + ".ld"))
    for f in os.listdir(dst):
        p = os.path.join(dst, f)
        text = open(p, encoding="utf-8").read()
        open(p, "w", encoding="utf-8").write(text.replace("mota_mps_board(%s)" % like, "mota_mps_board(%s)" % name))
    row = [r for r in registry(tree) if r[0] == like][0]
    with open(os.path.join(tree, "ports", "boards.txt"), "a", encoding="utf-8") as out:
        out.write("%-9s %-7s %-11s %-11s -\n" % (name, row[1], row[2], row[3]))


def host_build(tree, build, cross_dirs):
    args = ["cmake", "-S", tree, "-B", build, "-G", "Ninja", "-DMOTA_FIRMWARE=OFF", "-DCMAKE_BUILD_TYPE=Release"]
    args += ["-DMOTA_CROSS_DIR_%s=%s" % (b, d) for b, d in cross_dirs.items()]
    rc, out = run(args)
    if rc != 0:
        return rc, out
    return run(["cmake", "--build", build, "--target", "mota"])


def new_board(root, work):
    if shutil.which("arm-none-eabi-gcc") is None or not os.path.exists(
            os.path.join(root, ".deps", "src", "mbedtls", ".unpacked")):
        print("SKIPPED: no arm-none-eabi-gcc or no device dependencies (scripts/fetch-cross-deps.sh)")
        return SKIP
    shutil.rmtree(work, ignore_errors=True)
    tree = os.path.join(work, "tree")
    copy_tree(root, tree)
    name = "an386x"
    add_board(tree, name)
    fails = []
    # its firmware, from the registry alone: MOTA_BOARD picks its folder and family, its cpu the toolchain
    cross = os.path.join(work, "cross-" + name)
    row = [r for r in registry(tree) if r[0] == name][0]
    rc, out = run(["cmake", "-S", tree, "-B", cross, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=MinSizeRel",
                   "-DCMAKE_TOOLCHAIN_FILE=%s/cmake/arm-none-eabi-%s.cmake" % (tree, row[2]), "-DMOTA_BOARD=" + name])
    if rc == 0:
        rc, out = run(["cmake", "--build", cross, "--target", "mota-%s.elf" % name])
    elf = os.path.join(cross, "boards", name, "mota-%s.elf" % name)
    if rc != 0 or not os.path.exists(elf):
        fails.append("its firmware did not build:\n" + out[-3000:])
    else:
        print(f"firmware: {os.path.relpath(elf, work)} built from its folder and its registry line")
    # the host tool and the test list, with that cross tree
    build = os.path.join(work, "host")
    rc, out = host_build(tree, build, {name: cross})
    if rc != 0:
        fails.append("the host tool did not build:\n" + out[-3000:])
        return report(fails)
    mota = os.path.join(build, "host_tool", "mota")
    rc, out = run([mota, "sim", "--help"])
    if name not in out:
        fails.append(f"mota sim --help does not list {name}")
    rc, out = run([mota, "sim", "--target", name, "--help"])
    if rc != 0 or row[3] not in out:
        fails.append(f"mota sim --target {name} --help: exit {rc}, no {row[3]} in it:\n{out[-1000:]}")
    rc, out = run([mota, "sim", "--target", "nosuch", "--tcp", "127.0.0.1:0"])
    if rc == 0 or name not in out:
        fails.append(f"mota sim --target nosuch does not name {name} among the boards:\n{out[-500:]}")
    rc, out = run(["ctest", "--test-dir", build, "-N"])
    listed = [line for line in out.splitlines() if "board_%s_" % name in line]
    if not listed:
        fails.append(f"the board test list has no board_{name}_* case")
    else:
        print(f"test list: {len(listed)} board_{name}_* cases")
    print(f"mota sim --target {name}: its usage names {row[3]}")
    # and without its line, the same tree knows no such board (the registry is the only list)
    lines = open(os.path.join(tree, "ports", "boards.txt"), encoding="utf-8").read().splitlines(True)
    open(os.path.join(tree, "ports", "boards.txt"), "w", encoding="utf-8").writelines(
        [x for x in lines if not x.startswith(name + " ")])
    rc, out = host_build(tree, build, {})
    rc2, out2 = run([os.path.join(build, "host_tool", "mota"), "sim", "--target", name, "--tcp", "127.0.0.1:0"])
    rc3, out3 = run(["ctest", "--test-dir", build, "-N"])
    if rc != 0 or rc2 == 0 or "board_%s_" % name in out3:
        fails.append(f"without its registry line the board is still known (build {rc}, sim {rc2})")
    else:
        print(f"without its line: mota sim --target {name} is refused ({out2.strip().splitlines()[-1]})")
    return report(fails)


def report(fails):
    for f in fails:
        print("FAIL " + f)
    return 1 if fails else 0


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("named", "new-board"):
        print(__doc__)
        return 2
    root, work, what = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    return named(root) if what == "named" else new_board(root, work)


if __name__ == "__main__":
    sys.exit(main())
