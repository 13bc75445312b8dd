# SPDX-License-Identifier: Apache-2.0
"""A gateway for the fleet tests and scripts/bench-fleet.sh: simulated MCUs (and a QEMU board) behind one
gateway.conf, and Debian's mender client in standalone mode (as root) with the module's wrapper installed.

The module's wrapper (/usr/share/mender/modules/v3/mota), the inventory script's and
/etc/mender/artifact_info are global: a Gateway holds a lock while it lives and puts back what it found.
"""
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "link"))
from harness import Env, Skip  # noqa: E402

MODULE = "/usr/share/mender/modules/v3/mota"
INVENTORY = "/usr/share/mender/inventory/mender-inventory-mota"
ARTIFACT_INFO = "/etc/mender/artifact_info"
LOCK = "/tmp/mota-fleet-tests.lock"
DEVICE_TYPE = "mota-gateway"
BASE = "gateway-base"  # the artifact name before any deployment (/etc/mender/artifact_info)
SIMS = ("sim1", "sim2")


def board_firmware(firmware):
    return bool(firmware) and os.path.exists(os.path.join(firmware, "mota-an547.elf"))


class Gateway:
    """One case's gateway: its MCUs, its gateway.conf, mender's configuration and data directory."""

    def __init__(self, mota, work, firmware=None):
        self.mota, self.work, self.firmware = os.path.abspath(mota), work, firmware
        if os.geteuid() != 0:
            raise Skip("mender's standalone mode needs root")
        for tool in ("mender", "mender-artifact"):
            if shutil.which(tool) is None:
                raise Skip("%s is absent (scripts/setup.sh test installs it)" % tool)
        self.lock = open(LOCK, "a")
        fcntl.flock(self.lock, fcntl.LOCK_EX)  # another build's fleet tests use the same global files
        self.saved = {}
        self.env = None
        try:
            self.setup()
        except BaseException:
            self.close()
            raise

    def setup(self):
        self.env = Env(self.mota, self.work)
        self.mcus = {}  # name -> tcp HOST:PORT
        self.errs = {}  # name -> the simulator's stderr file
        self.board_port = None
        self.conf = self.p("gateway.conf")
        self.data = self.p("mender-data")
        os.makedirs(self.data)  # mender does not make it: "Failed to open DB environment"
        self.mlog = self.p("mender.log")
        for path, text in ((MODULE, '#!/bin/sh\nexec %s mender-module "$@"\n' % self.mota),
                           (INVENTORY, '#!/bin/sh\nexec %s mender-inventory "$@"\n' % self.mota),
                           (ARTIFACT_INFO, "artifact_name=%s\n" % BASE)):
            self.put(path, text)
        os.chmod(MODULE, 0o755)
        os.chmod(INVENTORY, 0o755)
        with open(self.p("device_type"), "w") as f:
            f.write("device_type=%s\n" % DEVICE_TYPE)
        with open(self.p("mender.conf"), "w") as f:
            json.dump({"DeviceTypeFile": self.p("device_type"), "ModuleTimeoutSeconds": 300}, f)
        self.menv = dict(os.environ, MOTA_GATEWAY_CONF=self.conf)

    def p(self, name):
        return self.env.p(name)

    def put(self, path, text):
        """Write a global file, keeping what was there (or that nothing was) for close()."""
        try:
            with open(path, "rb") as f:
                self.saved[path] = (f.read(), os.stat(path).st_mode)
        except FileNotFoundError:
            self.saved[path] = None
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def close(self):
        if self.env:
            self.env.close()
        for path, old in self.saved.items():
            if old is None:
                if os.path.exists(path):
                    os.unlink(path)
            else:
                with open(path, "wb") as f:
                    f.write(old[0])
                os.chmod(path, old[1])
        fcntl.flock(self.lock, fcntl.LOCK_UN)
        self.lock.close()

    # --- the MCUs -------------------------------------------------------------------------------------

    def sim(self, name, *extra):
        """A simulated MCU with a network and a dense model slot; its stderr to NAME.err (read by the cases)."""
        err = self.p(name + ".err")
        args = [self.mota, "sim", "--tcp", "127.0.0.1:0", "--key", self.p("k.pub.pem"), "--flash", self.p(name + ".flash"),
                "--model", "network", "--model", "dense", "--dbg-info", "--async", *extra]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(err, "w"), text=True)
        self.env.procs.append(proc)
        m = re.search(r"listening on tcp:(\S+)", proc.stdout.readline())
        assert m, (name, "did not start", open(err).read())
        self.mcus[name], self.errs[name] = m.group(1), err
        return m.group(1)

    def board(self):
        """The an547 board, provisioned with the same model names as the simulators, or None without firmware."""
        if not board_firmware(self.firmware):
            return None
        _, port = self.env.board(self.p("board.flash"), "--key", self.p("k.pub.pem"), "--model", "dense",
                                 "--model", "network", "--trial-boots", "2")
        assert self.env.wait_status(port, 30) is not None, "the board did not answer"
        self.mcus["board"] = self.board_port = port
        return port

    def standard(self, *sim_extra, board=True):
        """The gateway of most cases: sim1, sim2 and the board (when this build has its firmware)."""
        for s in SIMS:
            self.sim(s, *sim_extra)
        if board:
            self.board()
        self.write_conf()

    def write_conf(self, extra=(), leave_out=()):
        lines = ["# the gateway's MCUs: NAME PORT [options]", ""]
        lines += ["%s tcp:%s --timeout 10" % (n, p) for n, p in self.mcus.items() if n not in leave_out]
        lines += list(extra)
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def models(self, name):
        r = self.env.run("status", "--json", "--timeout", "10", "tcp:" + self.mcus[name], timeout=60)
        return {m["name"]: m for m in json.loads(r.stdout)["models"]}

    def active(self, name, model="network"):
        """(seq, state) of the model the MCU runs, or None."""
        a = self.models(name)[model]["active"]
        return (a["seq"], a["state"]) if a else None

    def snapshot(self, name):
        """What an update could change on an MCU, every model."""
        return {k: {f: m[f] for f in ("active", "previous", "upload", "committed_seq", "last_error")}
                for k, m in self.models(name).items()}

    def keep_board(self):
        """Note what the board runs now (nothing without a board), for assert_board_kept()."""
        self.board_before = self.snapshot("board") if self.board_port else None

    def assert_board_kept(self):
        """The board is as keep_board() found it: no container of another class reached it."""
        if getattr(self, "board_before", None) is not None:
            assert self.snapshot("board") == self.board_before, ("the board changed", self.snapshot("board"))

    def sim_log(self, name):
        return open(self.errs[name]).read()

    # --- containers and artifacts ---------------------------------------------------------------------

    def sim_containers(self, *seqs, params=2048, tag="net"):
        rel, params_file = self.env.model(tag, params)
        return [self.env.pack("%s_v%d.mota" % (tag, s), rel, params_file, seq=s, version="%d.0.0" % s) for s in seqs]

    def artifact(self, name, container):
        out = self.p(name + ".mender")
        self.env.run("mender-artifact", "-o", out, "-t", DEVICE_TYPE, "-n", name, container)
        return out

    def baseline(self, container, names=SIMS):
        """The old model, installed and confirmed without mender."""
        for n in names:
            rc, _, res, err = self.env.push(self.mcus[n], container, "--confirm")
            assert rc == 0 and res["confirmed"], (n, rc, res, err)

    # --- mender ---------------------------------------------------------------------------------------

    def mender_cmd(self, *args):
        return ["mender", "--config", self.p("mender.conf"), "--data", self.data, "--no-syslog", *args]

    def mender(self, *args, timeout=400):
        """Run a mender command: (exit code, its stdout and stderr)."""
        r = subprocess.run(self.mender_cmd(*args), capture_output=True, text=True, env=self.menv, timeout=timeout)
        with open(self.mlog, "a") as f:
            f.write("$ mender %s\nexit %d\n%s%s\n" % (" ".join(args), r.returncode, r.stdout, r.stderr))
        return r.returncode, r.stdout + r.stderr

    def artifact_name(self):
        r = subprocess.run(self.mender_cmd("show-artifact"), capture_output=True, text=True, env=self.menv, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def inventory(self):
        """The inventory script's key=value lines, as mender's daemon runs it (no arguments)."""
        r = subprocess.run([INVENTORY], capture_output=True, text=True, env=self.menv, timeout=120)
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
        inv = {}
        for line in r.stdout.splitlines():
            assert "=" in line, ("not a key=value line", line, r.stdout)
            k, v = line.split("=", 1)
            inv[k] = v
        return inv

    def module(self, state, d):
        """`mota mender-module STATE DIR` as mender calls it (DIR its working directory)."""
        r = subprocess.run([self.mota, "mender-module", state, d], capture_output=True, text=True, env=self.menv, cwd=d,
                           timeout=400)
        with open(self.mlog, "a") as f:
            f.write("$ mota mender-module %s %s\nexit %d\n%s%s\n" % (state, d, r.returncode, r.stdout, r.stderr))
        return r


def module_lines(out):
    """The lines the module wrote, as mender relays them in its log."""
    return re.findall(r'Output \(std(?:err|out)\) from command \\?"[^"\\]*\\?": (.*)$', out, re.M)
