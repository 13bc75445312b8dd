#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A link emulator between `mota push` and a device on TCP.

usage: linkemu.py --target HOST:PORT [--listen HOST:PORT] [--baud N]
                  [--flip R] [--drop R] [--dup R] [--reorder R] [--stall-every N --stall-ms MS]
                  [--seed S] [--faults-both-ways] [--drop-answers N,M,...]

Rate-limits both directions to a serial line's 8N1 byte rate (baud / 10 bytes
per second) and, on the host-to-device direction (both with
--faults-both-ways), treats every 0x00-delimited frame with the given
probabilities: flip one bit, drop it, send it twice, swap it with the next
one; every N frames it stalls for MS milliseconds. --drop-answers drops the
listed device-to-host frames (numbered from 1 over the emulator's life), for
losses at a chosen point. Prints
"linkemu: listening on HOST:PORT" and, on SIGTERM, a JSON line of counters.
"""
import argparse
import json
import random
import signal
import socket
import sys
import threading
import time

ap = argparse.ArgumentParser()
ap.add_argument("--target", required=True)
ap.add_argument("--listen", default="127.0.0.1:0")
ap.add_argument("--baud", type=int, default=0)
ap.add_argument("--flip", type=float, default=0)
ap.add_argument("--drop", type=float, default=0)
ap.add_argument("--dup", type=float, default=0)
ap.add_argument("--reorder", type=float, default=0)
ap.add_argument("--stall-every", type=int, default=0)
ap.add_argument("--stall-ms", type=int, default=0)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--faults-both-ways", action="store_true")
ap.add_argument("--drop-answers", default="")
a = ap.parse_args()

drop_answers = {int(x) for x in a.drop_answers.split(",") if x}
stats = {"frames": 0, "answers": 0, "flipped": 0, "dropped": 0, "duplicated": 0, "reordered": 0, "stalls": 0,
         "bytes_to_device": 0, "bytes_to_host": 0}
lock = threading.Lock()
rng = random.Random(a.seed)


def host_port(s):
    h, p = s.rsplit(":", 1)
    return h, int(p)


class Pacer:
    """8N1 pacing: a byte takes 10 bit times."""

    def __init__(self):
        self.t = time.monotonic()

    def send(self, sock, data, key):
        if not data:
            return
        if a.baud:
            rate = a.baud / 10.0
            for i in range(0, len(data), 64):
                part = data[i:i + 64]
                now = time.monotonic()
                if self.t < now - 0.005:  # the line was idle: no credit for it
                    self.t = now
                self.t += len(part) / rate  # busy: bytes go back to back, late sleeps are caught up
                delay = self.t - now
                if delay > 0:
                    time.sleep(delay)
                sock.sendall(part)
        else:
            sock.sendall(data)
        with lock:
            stats[key] += len(data)


def faulty_frames(buf, frames_out, random_faults, to_host):
    """Split into frames; apply the faults; return the bytes to send and the leftover."""
    out = bytearray()
    held = None
    while True:
        i = buf.find(b"\x00")
        if i < 0:
            break
        frame, buf = bytearray(buf[:i + 1]), buf[i + 1:]
        with lock:
            if to_host:
                stats["answers"] += 1
                if stats["answers"] in drop_answers:
                    stats["dropped"] += 1
                    continue
            if not random_faults:
                out += frame
                continue
            stats["frames"] += 1
            r = rng.random
            if a.stall_every and stats["frames"] % a.stall_every == 0:
                stats["stalls"] += 1
                frames_out.append(("stall", None))
            if r() < a.drop:
                stats["dropped"] += 1
                continue
            if r() < a.flip and len(frame) > 1:
                k = rng.randrange(len(frame) - 1)
                frame[k] ^= 1 << rng.randrange(8)
                stats["flipped"] += 1
            copies = 2 if r() < a.dup else 1
            if copies == 2:
                stats["duplicated"] += 1
            swap = r() < a.reorder
        if swap and held is None:
            held = bytes(frame) * copies
            with lock:
                stats["reordered"] += 1
            continue
        out += bytes(frame) * copies
        if held is not None:
            out += held
            held = None
    if held is not None:
        out += held
    frames_out.append(("data", bytes(out)))
    return buf


def pump(src, dst, faults, key):
    pacer = Pacer()
    pending = b""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if faults or (key == "bytes_to_host" and drop_answers):
                pending += data
                events = []
                pending = faulty_frames(pending, events, faults, key == "bytes_to_host")
                for kind, payload in events:
                    if kind == "stall":
                        time.sleep(a.stall_ms / 1000.0)
                    else:
                        pacer.send(dst, payload, key)
            else:
                pacer.send(dst, data, key)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client):
    try:
        up = socket.create_connection(host_port(a.target), timeout=5)
        up.settimeout(None)
    except OSError:
        client.close()
        return
    for s in (client, up):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t1 = threading.Thread(target=pump, args=(client, up, True, "bytes_to_device"), daemon=True)
    t2 = threading.Thread(target=pump, args=(up, client, a.faults_both_ways, "bytes_to_host"), daemon=True)
    t1.start()
    t2.start()
    t1.join()
    t2.join()
    client.close()
    up.close()


def report(*_):
    with lock:
        print(json.dumps(stats), flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, report)
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(host_port(a.listen))
ls.listen(4)
print("linkemu: listening on %s:%d" % ls.getsockname(), flush=True)
while True:
    c, _ = ls.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
