#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The gateway side of mota without a Mender client: gateway.conf, the module's states run by hand on a
DIR laid out as Mender lays it out, mota mender-artifact and mota mender-inventory.

usage: test_gateway.py MOTA WORK CASE
Exit 0 pass, 1 fail, 77 skipped (mender-artifact absent: prints SKIPPED).
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "link"))
from harness import Env, Skip, run_case  # noqa: E402

MOTA, WORK, CASE = sys.argv[1:4]


def module(env, conf, state, d, check=None):
    """mota mender-module STATE DIR with this gateway.conf: (exit code, stdout, stderr)."""
    r = subprocess.run([env.mota, "mender-module", state, d], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, MOTA_GATEWAY_CONF=conf))
    if check is not None:
        assert r.returncode == check, (state, r.returncode, r.stdout, r.stderr)
    return r.returncode, r.stdout, r.stderr


def deployment(env, name, *containers, meta=None):
    """A module DIR as Mender lays it out for ArtifactInstall: files/ with the payloads, header/, tmp/."""
    d = env.p(name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "files"))
    os.makedirs(os.path.join(d, "header"))
    os.makedirs(os.path.join(d, "tmp"))
    for c in containers:
        shutil.copy(c, os.path.join(d, "files"))
    if meta is not None:
        with open(os.path.join(d, "header", "meta-data"), "w") as f:
            f.write(meta)
    return d


def conf(env, text, name="gateway.conf"):
    with open(env.p(name), "w") as f:
        f.write(text)
    return env.p(name)


def two_mcus(env, **pack):
    """A container (model network, seq 2, no self-test) and simulated MCUs a and b in one gateway.conf:
    (container, a's port, b's port, the conf's path)."""
    rel, params = env.model("m", 2000)
    c = env.pack("c.mota", rel, params, **dict(dict(seq=2, selftest=None), **pack))
    (_, pa), (_, pb) = env.sim(flash="a.flash"), env.sim(flash="b.flash")
    return c, pa, pb, conf(env, "a tcp:%s\nb tcp:%s\n" % (pa, pb))


def active(env, port):
    a = env.status(port)["active"]
    return (a["seq"], a["state"]) if a else None


def case_a_gateway_conf_with_a_mistake_is_refused_with_its_line_before_any_mcu_is_touched():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 2000)
        c = env.pack("c.mota", rel, params, seq=2, selftest=None)
        proc, port = env.sim()
        d = deployment(env, "D", c)
        good = "a tcp:%s\n" % port
        for text, words in [
                (good + "b tcp:127.0.0.1:99999\n", "2: port 'tcp:127.0.0.1:99999'"),
                (good + "a tcp:%s\n" % port, "2: MCU 'a' named twice"),
                ("# only a comment\n", "no MCU configured"),
                (good + "b /dev/ttyACM0 --baud fast\n", "2: --baud 'fast'"),
                (good + "b /dev/ttyACM0 --timeout\n", "2: expected NAME PORT"),
                (good + "b /dev/ttyACM0 --id 12345\n", "2: --id '12345'"),
                (good + "b /dev/ttyACM0 --colour red\n", "2: --colour 'red': unknown option"),
                (good + "b tcp:%s\n" % port, "2: port tcp:%s is a's already" % port),
                ("bad/name /dev/ttyACM0\n", "1: name 'bad/name'"),
                ("pump.1 /dev/ttyACM0\n", "1: name 'pump.1'"),
                (good + "b /dev/ttyACM1 " + "x" * 1100 + "\n", "2: longer than 1024 characters")]:
            rc, _, err = module(env, conf(env, text), "ArtifactInstall", d)
            assert rc == 1 and words in err and "gateway.conf:" in err, (text, rc, err)
        assert active(env, port) is None  # nothing was pushed
        rc, _, err = module(env, env.p("absent.conf"), "ArtifactInstall", d)
        assert rc == 1 and "absent.conf: No such file or directory" in err, err
        rc, _, err = module(env, env.work, "ArtifactInstall", d)
        assert rc == 1 and "%s: not a file" % env.work in err, err
        # comments, blank lines and options in any order
        text = "\n# the pump %s\r\na   tcp:%s   --timeout 30 --baud 9600 --retries 0   # on the bench" % ("x" * 3000, port)
        module(env, conf(env, text), "ArtifactInstall", d, check=0)
        assert active(env, port) == (2, "trial"), active(env, port)
    finally:
        env.close()


def case_a_damaged_container_is_refused_before_any_mcu_is_touched():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 2000)
        c = env.pack("c.mota", rel, params, seq=2, selftest=None)
        proc, port = env.sim()
        cfg = conf(env, "a tcp:%s\n" % port)
        data = bytearray(open(c, "rb").read())
        data[-10] ^= 0x40  # a payload byte: its digest no longer matches the signed one
        bad = env.p("bad.mota")
        open(bad, "wb").write(bytes(data))
        rc, _, err = module(env, cfg, "ArtifactInstall", deployment(env, "D", c, bad))
        assert rc == 1 and "bad.mota: not a sound mota container (MOTA_ERR_PAYLOAD_DIGEST)" in err, err
        rc, _, err = module(env, cfg, "ArtifactInstall", deployment(env, "E"))
        assert rc == 1 and "no container in the artifact" in err, err
        assert active(env, port) is None
    finally:
        env.close()


def case_the_query_states_answer_and_download_and_unknown_states_do_nothing():
    env = Env(MOTA, WORK)
    try:
        cfg = conf(env, "a tcp:127.0.0.1:1\n")  # never reached: these states touch no MCU
        d = deployment(env, "D")
        assert module(env, cfg, "SupportsRollback", d, check=0)[1] == "Yes\n"
        assert module(env, cfg, "NeedsArtifactReboot", d, check=0)[1] == "No\n"
        for state in ["Download", "ArtifactFailure", "Cleanup", "ArtifactVerifyReboot", "SomeFutureState"]:
            rc, out, err = module(env, cfg, state, d, check=0)
            assert out == "" and err == "", (state, out, err)
        assert os.listdir(os.path.join(d, "tmp")) == []
        r = subprocess.run([env.mota, "mender-module", "ArtifactInstall"], capture_output=True, text=True)
        assert r.returncode == 2 and "needs STATE DIR" in r.stderr, r.stderr
    finally:
        env.close()


def case_an_mcu_answering_with_another_device_id_fails_the_install_untouched():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 2000)
        c = env.pack("c.mota", rel, params, seq=2, selftest=None)
        proc, port = env.sim("--device-id", "00112233445566778899aabb")
        d = deployment(env, "D", c)
        rc, _, err = module(env, conf(env, "a tcp:%s --id 00112233445566778899aabc\n" % port), "ArtifactInstall", d)
        assert rc == 1 and ("another device answers on this port: device id 00112233445566778899aabb, "
                            "--id 00112233445566778899aabc") in err, err
        assert active(env, port) is None
        # a new install (Mender gives it a new DIR) reads the corrected file
        module(env, conf(env, "a tcp:%s --id 00112233445566778899AABB\n" % port), "ArtifactInstall",
               deployment(env, "E", c), check=0)
        assert active(env, port) == (2, "trial")
    finally:
        env.close()


def case_a_container_no_mcu_is_meant_for_fails_the_install_and_its_rollback_has_nothing_to_undo():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 2000)
        ours = env.pack("ours.mota", rel, params, seq=2, selftest=None)
        other = env.pack("other.mota", rel, params, seq=2, selftest=None, cls="another-board")
        proc, port = env.sim()
        cfg = conf(env, "a tcp:%s\n" % port)
        d = deployment(env, "D", other)
        rc, _, err = module(env, cfg, "ArtifactInstall", d)
        assert rc == 1 and "other.mota: no MCU of %s is meant for it" % cfg in err, err
        assert "a (tcp:%s): other.mota is not meant for it" % port in err, err
        _, _, err = module(env, cfg, "ArtifactRollback", d, check=0)
        assert err == "", err
        # a rollback with nothing pushed needs neither the configuration nor the files
        shutil.rmtree(os.path.join(d, "files"))
        module(env, env.p("absent.conf"), "ArtifactRollback", d, check=0)
        assert active(env, port) is None
        # beside a container that is meant for it, the same one still fails the deployment, and the
        # rollback undoes what was pushed
        d = deployment(env, "E", ours, other)
        rc, _, err = module(env, cfg, "ArtifactInstall", d)
        assert rc == 1 and "no MCU of" in err and active(env, port) == (2, "trial"), err
        _, _, err = module(env, cfg, "ArtifactRollback", d, check=0)
        assert "rolled back: network seq 2" in err and active(env, port) is None, err
    finally:
        env.close()


def case_commit_and_rollback_act_on_the_mcus_the_install_pushed_to_whatever_the_conf_says_later():
    env = Env(MOTA, WORK)
    try:
        c, pa, pb, cfg = two_mcus(env)
        d = deployment(env, "D", c)
        module(env, cfg, "ArtifactInstall", d, check=0)
        conf(env, "b tcp:%s\n" % pb)  # a left the file, then a typo came in
        module(env, cfg, "ArtifactRollback", d, check=0)
        assert active(env, pa) is None and active(env, pb) is None
        conf(env, "a tcp:%s\nb tcp:%s\n" % (pa, pb))
        d = deployment(env, "E", c)
        module(env, cfg, "ArtifactInstall", d, check=0)
        conf(env, "a tcp:%s\nb tcp:%s --baud\n" % (pa, pb))
        module(env, cfg, "ArtifactCommit", d, check=0)
        assert active(env, pa) == (2, "confirmed") and active(env, pb) == (2, "confirmed")
    finally:
        env.close()


def case_a_rollback_fails_only_for_an_unreachable_mcu_that_may_run_the_container():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 60000)
        c = env.pack("c.mota", rel, params, seq=2, selftest=None)
        # the port goes away in the middle of a push at 115200 baud (about 5 s of wire)
        proc, port = env.sim("--baud", "115200", flash="a.flash")
        cfg = conf(env, "a tcp:%s --retries 2 --timeout 3\n" % port)
        d = deployment(env, "D", c)
        inst = subprocess.Popen([env.mota, "mender-module", "ArtifactInstall", d], stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, MOTA_GATEWAY_CONF=cfg))
        time.sleep(2.5)
        env.stop(proc)
        _, err = inst.communicate(timeout=120)
        assert inst.returncode == 1, err
        # every attempt named for what happened to it, and each retry made
        assert err.count("push: MOTA_ERR_") == 2 and "MOTA_ERR_INTERNAL" not in err, err
        rc, _, err = module(env, cfg, "ArtifactRollback", d)
        assert rc == 0 and "never received network seq 2 v1.0.0 whole: nothing to roll back" in err, err
        # a push that put every byte on the wire: the MCU may run it, so an unreachable one fails the rollback
        proc, port = env.sim(flash="b.flash")
        cfg = conf(env, "b tcp:%s --retries 0 --timeout 3\n" % port)
        d = deployment(env, "E", c)
        module(env, cfg, "ArtifactInstall", d, check=0)
        env.stop(proc)
        rc, _, err = module(env, cfg, "ArtifactRollback", d)
        assert rc == 1 and "unreachable" in err, err
    finally:
        env.close()


def case_meta_data_is_read_as_json_and_a_list_past_16_kib_still_names_the_mcus():
    env = Env(MOTA, WORK)
    try:
        c, pa, pb, cfg = two_mcus(env)
        # Mender sorts the keys: a long one before mota_mcus
        meta = json.dumps({"aaa": "x" * 20000, "build": {"mota_mcus": ["b"]}, "mota_mcus": ["a"]}, indent=2)
        module(env, cfg, "ArtifactInstall", deployment(env, "D", c, meta=meta), check=0)
        assert active(env, pa) == (2, "trial") and active(env, pb) is None
        for bad in ['{"mota_mcus": ["a" "b"]}', '{"mota_mcus": [,"a"]}', '{"mota_mcus": ["a.b"]}',
                    '{"mota_mcus": ["a"]', '{"description": "x"} {}', '{"mota_mcus": ["%s"]}' % ("a" * 40)]:
            rc, _, err = module(env, cfg, "ArtifactInstall", deployment(env, "E", c, meta=bad))
            assert rc == 1 and "header/meta-data: " in err, (bad, err)
        # the name as a value, or nested, names nothing: every MCU may receive it
        meta = json.dumps({"description": "mota_mcus", "x": {"mota_mcus": ["a"]}})
        module(env, cfg, "ArtifactInstall", deployment(env, "F", c, meta=meta), check=0)
        assert active(env, pb) == (2, "trial")
        # no meta-data: Mender writes an empty file, or null
        for none in ["", " \n", "null"]:
            d = deployment(env, "G", c, meta=none)
            before = (active(env, pa), active(env, pb))
            module(env, cfg, "ArtifactRollback", d, check=0)  # nothing pushed from this DIR yet: nothing to do
            assert (active(env, pa), active(env, pb)) == before
            module(env, cfg, "ArtifactInstall", d, check=0)
            assert active(env, pa) == (2, "trial") and active(env, pb) == (2, "trial"), none
            module(env, cfg, "ArtifactRollback", d, check=0)
            assert active(env, pa) is None and active(env, pb) is None, none
    finally:
        env.close()


def case_an_artifact_for_named_mcus_reaches_only_them():
    env = Env(MOTA, WORK)
    try:
        if shutil.which("mender-artifact") is None:
            raise Skip("mender-artifact is absent (scripts/setup.sh test installs it)")
        c, pa, pb, cfg = two_mcus(env, version="1.4.0")
        rel, params = env.p("m_rel.bin"), env.p("m_params.bin")
        out = env.p("a.mender")
        r = env.run("mender-artifact", "-o", out, "-t", "gw", "--mcu", "a", c)
        assert "artifact a.network-1.4.0, provides mota.a.network.version=1.4.0" in r.stdout, r.stdout
        info = subprocess.run(["mender-artifact", "read", out], capture_output=True, text=True).stdout
        assert "Type:   mota" in info and "mota.a.network.version: 1.4.0" in info and '"a"' in info, info
        # the meta-data as Mender hands it over, reformatted
        d = deployment(env, "D", c, meta='{\n  "mota_mcus": [\n    "a"\n  ]\n}')
        _, _, err = module(env, cfg, "ArtifactInstall", d, check=0)
        assert "b (tcp:%s): not named by the artifact" % pb in err, err
        assert active(env, pa) == (2, "trial") and active(env, pb) is None
        rc, _, err = module(env, cfg, "ArtifactInstall", deployment(env, "E", c, meta='{"mota_mcus": "a"}'))
        assert rc == 1 and "mota_mcus is not a list of MCU names" in err, err
        # names the provides carry: given, or from the container; refused containers write nothing
        r = env.run("mender-artifact", "-o", env.p("n.mender"), "-t", "gw", "-n", "rel-7", "--software-name",
                    "pumps", "--software-version", "7", c)
        assert "artifact rel-7, provides mota.pumps.version=7" in r.stdout, r.stdout
        r = env.run("mender-artifact", "-o", env.p("x.mender"), "-t", "gw", env.p("m_rel.bin"), check=False)
        assert r.returncode == 1 and not os.path.exists(env.p("x.mender")), r.stderr
        r = env.run("mender-artifact", "-o", env.p("x.mender"), c, check=False)
        assert r.returncode == 2 and "needs -o OUT, -t DEVICE_TYPE" in r.stderr, r.stderr
        r = env.run("mender-artifact", "-o", env.p("x.mender"), "-t", "gw", "--mcu", "a.b", c, check=False)
        assert r.returncode == 2 and "--mcu 'a.b'" in r.stderr, r.stderr
        c3 = env.pack("c3.mota", rel, params, seq=3, selftest=None)
        r = env.run("mender-artifact", "-o", env.p("x.mender"), "-t", "gw", c, c3, check=False)
        assert r.returncode == 1 and "both for model network of one class" in r.stderr, r.stderr
        assert not os.path.exists(env.p("x.mender"))
    finally:
        env.close()


def case_a_delta_artifact_sends_the_delta_where_its_source_runs_and_the_full_container_elsewhere():
    """mota mender-artifact --delta-from OLD: the delta and the full container in one artifact; the module pushes
    the delta to the MCU that runs OLD and the full container to the one that runs another model; commit and
    rollback act on whichever each received. A delta without its full container, or without --delta-from, or
    from another container, is refused."""
    env = Env(MOTA, WORK)
    try:
        if shutil.which("mender-artifact") is None:
            raise Skip("mender-artifact is absent (scripts/setup.sh test installs it)")
        rel, params = env.model("m", 40000)
        old = env.pack("old.mota", rel, params, seq=1, selftest=None, compress="lzma")
        env.run("keygen", env.p("o.pem"))
        orel, oparams = env.model("o", 40000, seed=3)
        other = env.pack("other.mota", orel, oparams, seq=1, selftest=None)
        rel2, params2 = env.p("m2_rel.bin"), env.p("m2_params.bin")
        subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                                          "model_variant.py"), rel, rel2, "bytes", "--percent", "1",
                        "--params", params, params2], check=True, capture_output=True)
        full = env.pack("v2.mota", rel2, params2, seq=2, selftest=None, compress="lzma")
        delta = env.pack("v2-delta.mota", rel2, params2, seq=2, selftest=None, extra=("--delta-from", old))
        (_, pa), (_, pb) = env.sim(flash="a.flash"), env.sim(flash="b.flash")
        cfg = conf(env, "a tcp:%s\nb tcp:%s\n" % (pa, pb))
        assert env.push(pa, old, "--confirm")[0] == 0 and env.push(pb, other, "--confirm")[0] == 0
        out = env.p("d.mender")
        r = env.run("mender-artifact", "-o", out, "-t", "gw", "--delta-from", old, full, delta)
        assert "2 container(s)" in r.stdout, r.stdout
        info = subprocess.run(["mender-artifact", "read", out], capture_output=True, text=True).stdout
        old_digest = json.loads(env.run("inspect", "--json", old).stdout)["digest"]
        assert "mota_delta_from" in info and old_digest in info, info
        for bad, why in (((full, delta), "give --delta-from"), ((delta,), "no full container"),
                         (("--delta-from", other, full, delta), "is not a delta from other.mota")):
            r = env.run("mender-artifact", "-o", env.p("x.mender"), "-t", "gw", *bad, check=False)
            assert r.returncode == 1 and why in r.stderr and not os.path.exists(env.p("x.mender")), (bad, r.stderr)
        d = deployment(env, "D", full, delta, meta='{"mota_delta_from": "%s"}' % old_digest)
        _, _, err = module(env, cfg, "ArtifactInstall", d, check=0)
        assert "a (tcp:%s): network seq 2 v1.0.0 installed, on trial (as a delta" % pa in err, err
        assert "b (tcp:%s): network seq 2 v1.0.0 installed, on trial\n" % pb in err, err
        digests = {p: env.status(p)["active"]["digest"] for p in (pa, pb)}
        assert digests[pa] != digests[pb] and active(env, pa) == (2, "trial") == active(env, pb), digests
        module(env, cfg, "ArtifactRollback", d, check=0)
        assert active(env, pa) == (1, "confirmed") and active(env, pb) == (1, "confirmed")
        d = deployment(env, "E", full, delta, meta='{"mota_delta_from": "%s"}' % old_digest)
        module(env, cfg, "ArtifactInstall", d, check=0)
        module(env, cfg, "ArtifactCommit", d, check=0)
        assert active(env, pa) == (2, "confirmed") == active(env, pb)
        # the next release from v2: a runs v2 from its delta, b from the full container; both take v3's delta
        rel3, params3 = env.p("m3_rel.bin"), env.p("m3_params.bin")
        subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                                          "model_variant.py"), rel2, rel3, "bytes", "--percent", "1",
                        "--seed", "5", "--params", params2, params3], check=True, capture_output=True)
        full3 = env.pack("v3.mota", rel3, params3, seq=3, selftest=None, compress="lzma")
        delta3 = env.pack("v3-delta.mota", rel3, params3, seq=3, selftest=None, extra=("--delta-from", full))
        r = env.run("mender-artifact", "-o", env.p("d3.mender"), "-t", "gw", "--delta-from", full, full3, delta3)
        meta = json.loads(env.run("inspect", "--json", full).stdout)
        d = deployment(env, "F", full3, delta3, meta='{"mota_delta_from": "%s", "mota_delta_from_seq": %d}'
                       % (meta["digest"], 2))
        _, _, err = module(env, cfg, "ArtifactInstall", d, check=0)
        assert err.count("installed, on trial (as a delta") == 2, err
        print("one artifact, two MCUs: the delta (%d bytes) to the one that ran old.mota, the full container (%d "
              "bytes) to the other; rolled back, then committed, each on what it received; the next release's "
              "delta to both (one ran v2 from a delta)" % (os.path.getsize(delta), os.path.getsize(full)))
    finally:
        env.close()


def case_inventory_lists_each_mcu_and_says_which_cannot_be_reached():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 2000)
        c = env.pack("c.mota", rel, params, seq=3, version="2.0.1", selftest=None)
        proc, port = env.sim("--device-id", "a1a2a3a4a5a6a7a8a9aaabac")
        env.push(port, c, "--confirm")
        cfg = conf(env, "pump tcp:%s\ngone tcp:127.0.0.1:1\n" % port)
        r = subprocess.run([env.mota, "mender-inventory"], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, MOTA_GATEWAY_CONF=cfg))
        lines = r.stdout.splitlines()
        assert r.returncode == 0, r.stderr
        for want in ["mota.pump.reachable=yes", "mota.pump.device_id=a1a2a3a4a5a6a7a8a9aaabac",
                     "mota.pump.network.version=2.0.1", "mota.pump.network.seq=3",
                     "mota.pump.network.state=confirmed", "mota.pump.network.last_error=MOTA_OK",
                     "mota.gone.reachable=no"]:
            assert want in lines, (want, lines)
        assert all("=" in line for line in lines), lines
    finally:
        env.close()


def case_reboot_mode_reboots_each_mcu_once_and_verifies_it_still_runs_the_container_on_trial():
    env = Env(MOTA, WORK)
    try:
        rel, params = env.model("m", 2000)
        v1 = env.pack("v1.mota", rel, params, seq=1, selftest=None)
        v2 = env.pack("v2.mota", rel, params, seq=2, selftest=None)
        (_, pa), (_, pb) = env.sim(flash="a.flash"), env.sim("--trial-boots", "1", flash="b.flash")
        for p in (pa, pb):
            env.push(p, v1, "--confirm")
        cfg = conf(env, "a tcp:%s\nb tcp:%s\n" % (pa, pb))
        daemon = dict(os.environ, MOTA_GATEWAY_CONF=cfg, MOTA_MENDER_REBOOT="1")

        def state(name, d):
            r = subprocess.run([env.mota, "mender-module", name, d], capture_output=True, text=True, timeout=300,
                               env=daemon)
            return r.returncode, r.stdout, r.stderr

        d = deployment(env, "D", v2)
        assert state("NeedsArtifactReboot", d)[1] == "Yes\n"
        assert module(env, cfg, "NeedsArtifactReboot", d, check=0)[1] == "No\n"  # without it: the MCU's own
        assert state("ArtifactInstall", d)[0] == 0
        before = {p: env.status(p)["active"]["trial_boots_left"] for p in (pa, pb)}
        rc, _, err = state("ArtifactReboot", d)
        assert rc == 0 and err.count("rebooted to run network seq 2") == 2, err
        assert state("ArtifactReboot", d)[0] == 0  # run again: no second reboot, no second trial boot spent
        st = json.loads(env.run("status", "--json", "--wait", "20", "tcp:" + pa).stdout)
        assert st["device"]["boot_cause"] == "software reset", st["device"]
        assert st["models"][0]["active"]["trial_boots_left"] == before[pa] - 1, (before, st["models"][0]["active"])
        # b restarts once more on its own (a crash loop): its one trial boot is spent, it reverts to v1, and the
        # verification says so
        env.run("reboot", "tcp:" + pb)
        assert env.wait_status(pb, 20) is not None and active(env, pb) == (1, "confirmed")
        rc, _, err = state("ArtifactVerifyReboot", d)
        assert rc == 1 and "b (tcp:%s): does not run network seq 2 v1.0.0 after its reboot: it reverted" % pb in err, err
        assert state("ArtifactRollback", d)[0] == 0
        assert active(env, pa) == (1, "confirmed") and active(env, pb) == (1, "confirmed")
        # a clean round: reboot, verify, commit
        d = deployment(env, "E", v2)
        conf(env, "a tcp:%s\n" % pa)
        for name in ("ArtifactInstall", "ArtifactReboot", "ArtifactVerifyReboot", "ArtifactCommit"):
            rc, _, err = state(name, d)
            assert rc == 0, (name, err)
        assert active(env, pa) == (2, "confirmed")
    finally:
        env.close()


def case_install_gateway_stages_mota_the_wrappers_and_an_example_conf_it_never_overwrites():
    env = Env(MOTA, WORK)
    try:
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        root = env.p("root")
        script = os.path.join(src, "scripts", "install-gateway.sh")
        r = subprocess.run(["bash", script, "--root", root, "--mota", MOTA], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert open(os.path.join(root, "usr/local/bin/mota"), "rb").read() == open(MOTA, "rb").read()
        for path, line in (("usr/share/mender/modules/v3/mota", 'exec /usr/local/bin/mota mender-module "$@"'),
                           ("usr/share/mender/inventory/mender-inventory-mota", "exec /usr/local/bin/mota "
                                                                                 "mender-inventory")):
            f = os.path.join(root, path)
            assert os.access(f, os.X_OK) and line in open(f).read().splitlines(), (path, open(f).read())
        # the staged wrapper, with the staged mota in place of /usr/local/bin's, answers as Mender expects
        text = open(os.path.join(root, "usr/share/mender/modules/v3/mota")).read()
        staged = env.p("wrapper")
        open(staged, "w").write(text.replace("/usr/local/bin/mota", os.path.join(root, "usr/local/bin/mota")))
        os.chmod(staged, 0o755)
        r = subprocess.run([staged, "SupportsRollback", env.work], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout == "Yes\n", (r.returncode, r.stdout, r.stderr)
        conf_path = os.path.join(root, "etc/mota/gateway.conf")
        assert "NAME PORT [--baud N]" in open(conf_path).read()
        open(conf_path, "w").write("pump tcp:127.0.0.1:4000\n")
        r = subprocess.run(["bash", script, "--root", root, "--mota", MOTA], capture_output=True, text=True)
        assert r.returncode == 0 and open(conf_path).read() == "pump tcp:127.0.0.1:4000\n", r.stderr
        r = subprocess.run(["bash", script, "--bogus"], capture_output=True, text=True)
        assert r.returncode == 2 and "usage" in r.stderr, r.stderr
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE, cleanup=lambda: shutil.rmtree(WORK, ignore_errors=True)))
