#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reaching a device without retyping its port (MOTA_PORT, the one device `mota ports` finds), port syntax
as usage errors, mota sim's --model and --like refusals, and the trial counter as status and push word it
(issue 29).

usage: test_ports.py MOTA WORK CASE
Exit 0 pass, 1 fail, 2 no such case.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Env, run_case  # noqa: E402

MOTA, WORK, CASE = sys.argv[1:4]
FORMS = "tcp:HOST:PORT"  # every port usage error shows the accepted forms
PATH_FORM = "a serial device or pty path"


def fake_machine(root, devices):
    """A /sys and /dev with one USB CDC ACM port per (name, node target) in devices: what `mota ports` reads
    (MOTA_SYSFS_ROOT, MOTA_DEV_ROOT). A node target is what /dev/NAME links to (a simulator's pty), or None."""
    sys_, dev = os.path.join(root, "sys"), os.path.join(root, "dev")
    os.makedirs(os.path.join(sys_, "class", "tty"))
    os.makedirs(os.path.join(dev, "serial", "by-id"))
    for i, (name, target) in enumerate(devices):
        usb = os.path.join(sys_, "devices", "usb1", "1-%d" % (i + 2))
        os.makedirs(usb)
        for attr, value in (("idVendor", "0483"), ("idProduct", "374b"), ("serial", "SN%d" % i)):
            open(os.path.join(usb, attr), "w").write(value + "\n")
        intf = os.path.join(usb, "1-%d:1.2" % (i + 2))
        drv = os.path.join(sys_, "bus", "usb", "drivers", "cdc_acm")
        os.makedirs(intf)
        os.makedirs(drv, exist_ok=True)
        os.symlink(os.path.relpath(drv, intf), os.path.join(intf, "driver"))
        os.symlink(os.path.relpath(os.path.join(sys_, "bus", "usb"), intf), os.path.join(intf, "subsystem"))
        d = os.path.join(sys_, "class", "tty", name)
        os.makedirs(d)
        os.symlink(os.path.relpath(intf, d), os.path.join(d, "device"))
        node = os.path.join(dev, name)
        if target:
            os.symlink(target, node)
        else:
            open(node, "w").close()
    env = dict(os.environ, MOTA_SYSFS_ROOT=sys_, MOTA_DEV_ROOT=dev)
    env.pop("MOTA_PORT", None)
    return env


def no_device_env(env):
    """An environment with neither MOTA_PORT nor any serial port: nothing to fall back on."""
    root = env.p("nothing")
    if not os.path.exists(root):
        fake_machine(root, [])
    e = dict(os.environ, MOTA_SYSFS_ROOT=os.path.join(root, "sys"), MOTA_DEV_ROOT=os.path.join(root, "dev"))
    e.pop("MOTA_PORT", None)
    return e


def usage_error(r, *words):
    assert r.returncode == 2 and r.stderr.startswith("mota: error: ") and r.stderr.count("\n") == 1, \
        (r.returncode, r.stderr)
    for w in words:
        assert w in r.stderr, (w, r.stderr)


def case_mota_port_serves_every_device_command_and_push_takes_the_container_alone():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 4096)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        v2 = env.pack("v2.mota", rel, params, seq=2, version="2.0.0")
        _, port = env.sim()
        with_port = dict(no_device_env(env), MOTA_PORT="tcp:" + port)
        # push CONTAINER: the one argument is the container, the port is MOTA_PORT's
        r = env.run("push", "--json", v1, env=with_port, check=False, timeout=120)
        assert r.returncode == 0 and '"installed":true' in r.stdout.replace(" ", ""), (r.returncode, r.stderr)
        st = json.loads(env.run("status", "--json", env=with_port).stdout)
        assert st["models"][0]["active"]["seq"] == 1, st
        inp = env.p("in.bin")
        open(inp, "wb").write(b"x")
        ins, outs = env.p("ins"), env.p("outs")
        os.makedirs(ins)
        os.makedirs(outs)
        open(os.path.join(ins, "a.bin"), "wb").write(b"x" * 64)
        env.run("sim-output", "--input", os.path.join(ins, "a.bin"), "10", os.path.join(outs, "a.bin"))
        for args in (["confirm"], ["invoke", "--input", inp, "--output-size", "16"], ["reboot"],
                     ["status", "--wait", "10"], ["validate", "--inputs", ins, "--outputs", outs]):
            r = env.run(*args, env=with_port, check=False, timeout=60)
            assert r.returncode == 0, (args, r.returncode, r.stderr)
        # push PORT CONTAINER stays as it was, and wins over MOTA_PORT
        bad = dict(with_port, MOTA_PORT="tcp:127.0.0.1:1")
        r = env.run("push", "--json", "tcp:" + port, v2, env=bad, check=False, timeout=120)
        assert r.returncode == 0, (r.returncode, r.stderr)
        assert json.loads(env.run("status", "--json", "tcp:" + port).stdout)["models"][0]["active"]["seq"] == 2
        # neither a container nor a port: what push needs, said
        usage_error(env.run("push", env=with_port, check=False), "needs CONTAINER")
        usage_error(env.run("push", "tcp:" + port, env=with_port, check=False), "needs CONTAINER", "tcp:" + port)
        # no PORT, no MOTA_PORT, no device: how to choose
        r = env.run("status", env=no_device_env(env), check=False)
        usage_error(r, "MOTA_PORT", "mota ports finds no device", FORMS, PATH_FORM)
        r = env.run("push", v1, env=no_device_env(env), check=False)
        usage_error(r, "MOTA_PORT", FORMS)
        # a MOTA_PORT written wrong is told as such
        r = env.run("status", env=dict(with_port, MOTA_PORT="tcp:127.0.0.1:99999"), check=False)
        usage_error(r, "MOTA_PORT tcp:127.0.0.1:99999", FORMS)
    finally:
        env.close()


def case_the_one_device_mota_ports_finds_is_used_and_said_and_several_are_listed():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 4096)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        link = env.p("ttyMOTA")
        args = [MOTA, "sim", "--pty", "--pty-link", link, "--key", env.p("k.pub.pem"), "--flash", env.p("sim.flash"),
                "--model", "network", "--dbg-info", "--async"]
        env.start(args, r"pty (\S+)")
        one = fake_machine(env.p("one"), [("ttyACM0", link)])
        name = os.path.join(env.p("one"), "dev", "ttyACM0")
        r = env.run("push", "--json", v1, env=one, check=False, timeout=120)
        said = "mota: using %s (the one device mota ports finds; MOTA_PORT to choose)\n" % name
        assert r.returncode == 0 and said in r.stderr, (r.returncode, r.stderr)
        r = env.run("status", env=one, check=False, timeout=30)
        assert r.returncode == 0 and r.stderr == said and "seq 1" in r.stdout, (r.returncode, r.stderr)
        # MOTA_PORT chooses over the one found: no guess said
        r = env.run("status", env=dict(one, MOTA_PORT=link), check=False, timeout=30)
        assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
        # two devices: no guess, both named
        two = fake_machine(env.p("two"), [("ttyACM0", link), ("ttyACM1", None)])
        r = env.run("status", env=two, check=False)
        names = [os.path.join(env.p("two"), "dev", n) for n in ("ttyACM0", "ttyACM1")]
        usage_error(r, "finds 2 devices", names[0], names[1], "MOTA_PORT")
        r = env.run("push", v1, env=two, check=False)
        usage_error(r, "finds 2 devices")
    finally:
        env.close()


def case_port_syntax_errors_are_usage_errors_that_show_the_accepted_forms():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 4096)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        _, port = env.sim()
        host, num = port.rsplit(":", 1)
        # tcp://HOST:PORT is the same port, as a URL writes it
        r = env.run("status", "--json", "tcp://" + port, check=False, timeout=30)
        assert r.returncode == 0 and json.loads(r.stdout)["status"] == "MOTA_OK", (r.returncode, r.stderr)
        for cmd in (["status"], ["push", "--json"]):
            for bad, why in (("tcp:[::1]:%s" % num, "IPv6"), ("tcp:::1:%s" % num, "IPv4 only"),
                             ("tcp:%s:99999" % host, "'99999' is no TCP port number"),
                             ("tcp:%s:0" % host, "'0' is no TCP port number"), ("tcp:%s" % host, "no :PORT"),
                             ("tcp://%s:x" % host, "'x'"), ("udp://%s" % port, "no such kind of port"),
                             ("tcp:tcp:%s" % port, "tcp: twice"), ("tcp:my-host:x:%s" % num, "more than one ':'"),
                             ("tcp:%s:%s" % (port, num), "more than one ':'"), ("TCP:" + port, "lower case"),
                             ("tcp::%s" % num, "no host before :PORT")):
                r = env.run(*cmd, bad, *([v1] if cmd[0] == "push" else []), check=False, timeout=30)
                usage_error(r, "%s: " % cmd[0], bad, why, FORMS, PATH_FORM)
        # the container where the port goes, the port after it: swapped, nothing sent
        before = open(v1, "rb").read()
        for swapped in ("tcp:" + port, "/dev/ttyACM9"):
            r = env.run("push", v1, swapped, check=False, timeout=30)
            usage_error(r, "arguments swapped", v1, swapped, FORMS, PATH_FORM)
        assert open(v1, "rb").read() == before
        assert json.loads(env.run("status", "--json", "tcp:" + port).stdout)["models"][0]["active"] is None
    finally:
        env.close()


def case_sim_refuses_an_empty_or_repeated_model_name():
    env = Env(MOTA, WORK)
    try:
        base = ["sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem")]
        usage_error(env.run(*base, "--model", "", check=False, timeout=10), "sim: --model ''")
        r = env.run(*base, "--model", "net", "--model", "cls", "--model", "net", check=False, timeout=10)
        usage_error(r, "sim: --model net given twice")
    finally:
        env.close()


def case_sim_like_a_split_model_without_params_says_it_needs_params():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 4096)
        r = env.run("sim", "--tcp", "127.0.0.1:0", "--key", env.p("k.pub.pem"), "--like", rel, check=False,
                    timeout=10)
        assert r.returncode == 1 and r.stderr.count("\n") == 1, (r.returncode, r.stderr)
        assert "MOTA_ERR_NBIN_SPLIT" in r.stderr and "--like %s is a split model" % rel in r.stderr \
            and "give them with --params FILE" in r.stderr, r.stderr
    finally:
        env.close()


def trial_line(env, *args):
    """The active line of the first model, as `mota ARGS` prints it."""
    out = env.run(*args, timeout=120).stdout
    return [line for line in out.splitlines() if line.startswith("  active:")][0]


def case_trial_boots_left_is_how_many_reboots_keep_the_model_on_trial():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 4096)
        v1 = env.pack("v1.mota", rel, params, seq=1)
        _, port = env.sim("--trial-boots", "2")
        tcp = "tcp:" + port
        # push's listing and status say the same; each reboot takes one, and the last one said reverts it
        want = ["2 reboot(s) left on trial, the 3rd from now reverts it; rebooted 0 of 2",
                "1 reboot(s) left on trial, the 2nd from now reverts it; rebooted 1 of 2",
                "0 reboot(s) left on trial, the next one reverts it; rebooted 2 of 2"]
        line = trial_line(env, "push", tcp, v1)
        assert "ON TRIAL (%s)" % want[0] in line, line
        for i, w in enumerate(want):
            line = trial_line(env, "status", tcp)
            assert "ON TRIAL (%s): confirm or roll back" % w in line, (i, line)
            left = json.loads(env.run("status", "--json", tcp).stdout)["models"][0]["active"]["trial_boots_left"]
            assert left == 2 - i, (i, left)
            env.run("reboot", tcp)
            assert env.wait_status(port, 10) is not None
        st = env.run("status", tcp).stdout
        assert "active:    none installed" in st and "MOTA_ERR_TRIAL_EXPIRED" in st, st
        print("--trial-boots 2: on trial after reboots 1 and 2, reverted by the 3rd, as status counted down")
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
