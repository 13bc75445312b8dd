#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Independent oracle for `mota info --epochs --json` (the "epochs" object).

Usage: epochs_oracle.py MODEL.bin    -> prints one JSON object (sort_keys=True)
       epochs_oracle.py --selftest   -> checks the ST yolov8n fixture (SKIPPED if absent)

Derived only from ST's public headers and the research notes, never from mota's C code.
Layout sources (repository @ commit, path):
  [H110] STMicroelectronics/x-cube-n6-ai-power-measurement @ f2ff28a3,
         Lib/AI_Runtime/Npu/ll_aton/ll_aton_NN_interface.h, ll_sw.h            (LL_ATON 1.1.0)
  [H111] PeleAB/STM32N6-FaceRecognition @ 3428e535, Lib/AI_Runtime/Npu/ll_aton/
         ll_aton_NN_interface.h, ll_aton_reloc_network.h, ll_sw.h               (LL_ATON 1.1.1)
  [H113] openmv/openmv @ 13349261, lib/stai/libstai/include/
         ll_aton_NN_interface.h, ll_aton_reloc_network.h, ll_sw.h               (LL_ATON 1.1.3)
  [FMT]  /work/shared/research/st-reloc-format.md (NBIN header, tags, rt_ctx words)
Thumb code is decoded with arm-none-eabi-objdump; only the instruction shapes below are used.
"""
import json, os, re, struct, subprocess, sys, tempfile

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "fixtures", "st-n6",
                       "yolov8n_network_rel.bin")  # ../shared beside the checkout
TAG_CODE, TAG_RAM, TAG_PARAMS = 2, 4, 8          # [FMT] s3.1: top nibble of a link address

# EpochBlock_Flags_t bits, identical in [H110]/[H111]/[H113] (blob_encrypted 0x100 only from 1.1.1).
FLAG_NAMES = ["epoch_start", "epoch_end", "blob", "last_eb", "pure_hw", "pure_sw",
              "hybrid", "internal", "blob_encrypted"]
F_LAST = 0x8
KINDS = ((0x4, "blob", "npu"), (0x10, "hw", "npu"), (0x40, "hybrid", "npu+cpu"), (0x20, "sw", "cpu"))

# struct ll_aton_reloc_callback [H111]/[H113]: slot = byte offset / 4. Slots 0..6 are
# assert/error/cache maintenance (bookkeeping). 21, 22 were appended in 1.1.3 [H113]. 1.1.0 has
# the same 21 slots (its _network_reloc_callback initialiser, stored file id 428832988; [H110]
# itself ships no ll_aton_reloc_network.h).
CB_NAMES = {7: "Concat", 8: "Cast", 9: "Softmax", 10: "DMA_ImageToRow", 11: "DMA_SpaceToDepth",
            12: "DMA_RowToImage", 13: "DMA_DepthToSpace", 14: "DMA_Outputs_Flat_Copy",
            15: "DMA_Outputs_Slice_SplitLike", 16: "DMA_Outputs_Channel_Split_Aton",
            17: "DMA_Outputs_Channel_Split_Batched", 18: "DMA_Pad_Memset", 19: "DMA_Pad_Filling",
            20: "DMA_Transpose"}
CB_NAMES_113 = {21: "Async_Memcpy", 22: "DMA_Pad_4Loop_Filling"}
CB_BOOKKEEPING = 7        # slots below this are ignored

# NodeType (ll_sw.h): LL_SW_CONV = 0, then consecutive. Identical in [H110] and [H111] (ends at
# TILE = 82); [H113] appends LL_SW_GELU = 83. Printed as the suffix with only its first letter upper.
NODE_TYPES = ("CONV RELU PRELU THRESHOLDEDRELU ELU SELU MAXPOOL MINPOOL AVGPOOL SOFTMAX BATCHNORM "
              "LRN ARITHADD ARITHSUM ARITHSUB ARITHMUL ARITHDIV CONCAT SPLIT SLICE SIGMOID ATAN ATANH "
              "ACOS ACOSH ASIN ASINH TAN TANH COS COSH SIN SINH SQRT CEIL GATHER FLOOR EXP LOG "
              "QLINEARCONV QUANTIZELINEAR REQUANTIZELINEAR DEQUANTIZELINEAR QLINEARMATMUL GEMM RESIZE "
              "ERF POW AND OR XOR EQUAL GREATER LESS GREATEROREQUAL LESSOREQUAL CLIP HARDSIGMOID "
              "HARDMAX HARDSWISH SWISH ABS INSTANCENORM REDUCESUM REDUCEMIN REDUCEMEAN REDUCEMAX "
              "REDUCEPROD SOFTSIGN SOFTPLUS LPNORM ARGMIN ARGMAX MATMUL MIN MAX NEG RECIPROCAL MOD "
              "ROUND REDUCELOGSUMEXP SIGN TILE").split()
NODE_TYPES_113 = NODE_TYPES + ["GELU"]

# Buffer_DataType_TypeDef: renumbered after 1.1.0 [H110] vs [H111] (= [H113]). FXP = 100 in both.
DT_110 = "UNDEFINED FLOAT UINT8 INT8 UINT16 INT16 INT32 INT64 STRING BOOL FLOAT16 DOUBLE UINT32 " \
         "UINT64 COMPLEX64 COMPLEX128 BFLOAT16".split()
DT_111 = "UNDEFINED FLOAT UINT2 INT2 UINT4 INT4 UINT8 INT8 UINT16 INT16 INT32 INT64 STRING BOOL " \
         "FLOAT16 DOUBLE UINT32 UINT64 COMPLEX64 COMPLEX128 BFLOAT16".split()


class OracleError(Exception):
    pass


class Model:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.path, self.d, self._dis = path, f.read(), {}
        self.parse_header()

    # ---- raw access -----------------------------------------------------------------
    def unpack(self, fmt, off):
        if off < 0 or off + struct.calcsize(fmt) > len(self.d):
            raise OracleError("read outside the file at %#x" % off)
        return struct.unpack_from(fmt, self.d, off)

    def u32(self, off):
        return self.unpack("<I", off)[0]

    def file_off(self, addr):
        """File offset of a tagged address in the code or the RW data image ([FMT] s1, s3.1)."""
        tag, off = addr >> 28, addr & 0x0FFFFFFF
        if tag == TAG_CODE and off < self.ro:
            return off
        if tag == TAG_RAM and off < self.rw_init:      # .bss (beyond bss_start) is not in the file
            return self.ro + off
        raise OracleError("address %#x has no file image" % addr)

    def cstr(self, addr):
        o = self.file_off(addr)
        return self.d[o:self.d.index(b"\0", o)].decode("latin-1")

    # ---- header and rt_ctx ([FMT] s2, s5) ---------------------------------------------
    def parse_header(self):
        if len(self.d) < 104 or self.u32(0) != 0x4E49424E:
            raise OracleError("not an NBIN file")
        w = [self.u32(4 * i) for i in range(26)]
        if w[1] >> 28 != 8:
            raise OracleError("not an NPU (reloc 8.x) NBIN")
        self.ro = w[4] & 0x0FFFFFFF                  # data_data: file offset of RW image
        self.rw_init = w[5] & 0x0FFFFFFF             # bss_start: bytes of RW image in the file
        # 24-word header: word 23 = ctx (tag 4). 26-word header: word 23 is a function (tag 2),
        # word 25 = ctx. The entries 19..22 keep their place in both ([H113] ai_reloc_network_entries).
        self.ctx_ptr = w[23] if w[23] >> 28 == TAG_RAM else \
            w[25] if w[23] >> 28 == TAG_CODE and w[25] >> 28 == TAG_RAM else None
        if self.ctx_ptr is None:
            raise OracleError("cannot locate rt_ctx")
        self.entry = {"epochs": w[19], "output": w[20], "input": w[21], "internal": w[22]}
        ctx = self.file_off(self.ctx_ptr)
        v = self.u32(ctx + 40)                       # rt_ctx word 10: rt_version
        self.ver = ((v >> 24) & 0xFF, (v >> 16) & 0xFF, (v >> 8) & 0xFF)
        self.debug_info = bool((w[1] >> 21) & 1)     # AI_RELOC_RT_DBG_INFO [H111]
        dbg_size = 48 if self.debug_info else 20         # sizeof(EpochBlock_ItemTypeDef), AAPCS
        if self.ver >= (1, 1, 1):
            sizes = self.u32(ctx + 56)                    # rt_ctx word 14: rt_c_struct_sizes
            self.record_size, self.bufinfo_size = (sizes >> 8) & 0xFF, sizes & 0xFF
            if self.record_size != dbg_size:
                raise OracleError("rt_c_struct_sizes %#x disagrees with DBG flag" % sizes)
        else:
            self.record_size, self.bufinfo_size = dbg_size, 56
        if self.bufinfo_size != 56:
            raise OracleError("unexpected sizeof(LL_Buffer_InfoTypeDef) %d" % self.bufinfo_size)

    # ---- Thumb disassembly (objdump) ----------------------------------------------------
    LINE = re.compile(r"^\s*([0-9a-f]+):\s+([0-9a-f]{4}(?: [0-9a-f]{4})?)\s+(\S+)\s*([^@]*?)\s*(?:@(.*))?$")

    def disasm(self, start, length):
        """List of (addr, mnemonic, operands, comment) for [start, start+length) of the file."""
        key = (start, length)
        if key not in self._dis:
            stop = min(start + length, self.ro)
            out = subprocess.run(["arm-none-eabi-objdump", "-D", "-b", "binary", "-marm",
                                  "-Mforce-thumb", "--start-address=%#x" % start,
                                  "--stop-address=%#x" % stop, self.path],
                                 check=True, capture_output=True, text=True).stdout
            ins = []
            for line in out.splitlines():
                m = self.LINE.match(line)
                if m:
                    ins.append((int(m.group(1), 16), m.group(3), m.group(4).strip(),
                                (m.group(5) or "").strip()))
            self._dis[key] = ins
        return self._dis[key]

    @staticmethod
    def is_return(mn, ops):
        return ((mn.startswith("pop") or mn.startswith("ldmia")) and "pc}" in ops) or \
               (mn.startswith("bx") and ops == "lr")

    def function(self, start):
        """Instructions of the function at file offset `start`: up to the first return or tail
        b.w that is not skipped over by a local (conditional, cbz or 16-bit b) branch."""
        for length in (0x400, 0x2000, 0x8000):
            ins, reach = [], start
            for a, mn, ops, cm in self.disasm(start, length):
                ins.append((a, mn, ops, cm))
                tgt = branch_target(mn, ops)
                if tgt is not None and mn != "b.w" and tgt > reach:
                    reach = tgt
                if a >= reach and (self.is_return(mn, ops) or mn == "b.w"):
                    return ins
        raise OracleError("no end found for function at %#x" % start)

    def literal(self, cm):
        m = re.match(r"\(?(0x[0-9a-f]+)\)?", cm)
        return self.u32(int(m.group(1), 16)) if m else None

    # ---- getters: `ldr rX,[pc,#k]; ldr.w r0,[r9,rX]; bx lr` or `movs r0,#0; bx lr` ---------
    def getter(self, entry):
        ins = self.disasm(entry & 0x0FFFFFFE, 12)
        if len(ins) >= 2 and ins[0][1:3] == ("movs", "r0, #0") and ins[1][1:3] == ("bx", "lr"):
            return None
        if len(ins) >= 3 and ins[0][1] in ("ldr", "ldr.w") and "[pc" in ins[0][2]:
            rx = ins[0][2].split(",")[0]
            if ins[1][1] == "ldr.w" and ins[1][2] == "r0, [r9, %s]" % rx and ins[2][1:3] == ("bx", "lr"):
                got = self.literal(ins[0][3])          # RW offset of a GOT word ([FMT] s3.2)
                return self.u32(self.ro + got)         # tagged address of the table
        raise OracleError("getter at %#x has an unknown shape" % entry)

    # ---- callback stubs (ll_aton_reloc_callbacks.c, stored id 1097347778; shape seen in the fixture)
    def stub_slot(self, target):
        """Slot N if the function at `target` calls rt_ctx->cbs[N], else None."""
        if ("slot", target) in self._dis:
            return self._dis[("slot", target)]
        st, slot = {}, None
        for a, mn, ops, cm in self.disasm(target, 0x60)[:24]:
            r = [x.strip() for x in ops.split(",")]
            if mn in ("ldr", "ldr.w") and len(r) >= 2 and r[1] == "[pc":
                st[r[0]] = ("lit", self.literal(cm))
            elif mn == "ldr.w" and len(r) == 3 and r[1] == "[r9" and st.get(r[2].rstrip("]"), ("",))[0] == "lit":
                got = st[r[2].rstrip("]")][1]
                st[r[0]] = ("ctx",) if self.u32(self.ro + got) == self.ctx_ptr else None
            elif mn == "ldr" and re.match(r"r\d+, \[r\d+(, #\d+)?\]$", ops):
                base, off = r[1].strip("[]"), int(r[2].strip("#]")) if len(r) > 2 else 0
                prev = st.get(base)
                st[r[0]] = (("cbs",) if prev == ("ctx",) and off == 16 else
                            ("fn", off // 4) if prev == ("cbs",) and off % 4 == 0 else None)
            elif mn == "blx":
                v = st.get(ops)
                slot = v[1] if v and v[0] == "fn" else None
                break
            elif self.is_return(mn, ops) or mn in ("b", "b.n", "b.w", "bx"):
                break
            elif not (mn.startswith("cb") or mn.startswith("str") or mn.startswith("push")):
                st.pop(r[0], None)                     # e.g. `mov r4, r9`: r4 is something else
        self._dis[("slot", target)] = slot
        return slot

    def callback_ops(self, funcs):
        ops = []
        for f in funcs:
            for a, mn, o, cm in self.function(f):
                if mn in ("bl", "b.w"):
                    slot = self.stub_slot(int(o, 16))
                    if slot is not None and slot >= CB_BOOKKEEPING:
                        names = {**CB_NAMES, **(CB_NAMES_113 if self.ver >= (1, 1, 3) else {})}
                        ops.append({"via": "callback", "slot": slot, "name": names.get(slot, "unknown")})
        return ops

    # ---- SW kernels: memset(&info, 0, n) on the stack, then strb #NodeType at &info ------
    def sw_kernel(self, start):
        regs, sp, base = {}, 0, None       # reg -> ("imm", v) | ("stk", offset from entry sp)
        for a, mn, ops, cm in self.function(start):
            r = [x.strip() for x in ops.replace("{", "").replace("}", "").split(",")]
            m0 = mn.split(".")[0]
            if m0 in ("push", "stmdb") and (m0 == "push" or r[0] == "sp!"):
                sp -= 4 * len([x for x in r if x != "sp!"])
            elif m0 in ("sub", "add", "subw", "addw") and r[0] == "sp" and r[-1].startswith("#"):
                sp += int(r[-1][1:], 0) * (-1 if m0.startswith("sub") else 1)
            elif m0 in ("add", "addw") and len(r) == 3 and r[1] == "sp" and r[2].startswith("#"):
                regs[r[0]] = ("stk", sp + int(r[2][1:], 0))
            elif m0 in ("mov", "movs", "movw") and len(r) == 2:
                regs[r[0]] = (("imm", int(r[1][1:], 0)) if r[1].startswith("#") else
                              ("stk", sp) if r[1] == "sp" else regs.get(r[1]))
            elif m0 in ("bl", "blx"):
                dst = regs.get("r0")
                if base is None and regs.get("r1") == ("imm", 0) and dst and dst[0] == "stk" \
                        and (regs.get("r2") or ("",))[0] == "imm":
                    base = dst[1]                       # memset(dst, 0, size) returns dst
                for x in ("r0", "r1", "r2", "r3", "r12", "ip"):
                    regs.pop(x, None)
                if base is not None and dst and dst == ("stk", base):
                    regs["r0"] = dst
            elif m0 == "strb" and base is not None:
                m = re.match(r"(r\d+|ip|lr), \[(\w+)(?:, #(-?\d+))?\]$", ops)
                if m:
                    b = ("stk", sp) if m.group(2) == "sp" else regs.get(m.group(2))
                    val = regs.get(m.group(1))
                    if b and b[0] == "stk" and b[1] + int(m.group(3) or 0) == base and val and val[0] == "imm":
                        names = NODE_TYPES_113 if self.ver >= (1, 1, 3) else NODE_TYPES
                        if val[1] < len(names):
                            return [{"via": "sw_kernel", "node_type": val[1],
                                     "name": names[val[1]].capitalize()}]
                        return []
            elif not m0.startswith(("str", "cmp", "cmn", "tst", "teq", "b", "cb", "it", "nop",
                                    "vst", "vpush", "vcmp")):
                for x in r[:2] if m0 in ("ldrd", "umull", "smull", "umlal", "smlal") else r[:1]:
                    regs.pop(x, None)                   # any other write: value unknown
        return []

    # ---- the report ---------------------------------------------------------------------
    def blocks(self):
        tbl = self.getter(self.entry["epochs"])
        if tbl is None:
            return None, []
        off, rs, out = self.file_off(tbl), self.record_size, []
        for i in range(100000):
            # EpochBlock_ItemTypeDef [H111]: 4 words, u16 flags, then (DBG) i16 epoch_num,
            # i16 last_epoch_num, pad, u32 in/out streng masks, u64 npu/tot cycle estimates.
            s, e, blob, wait, fl = self.unpack("<IIIIH", off + i * rs)
            if fl & F_LAST:
                return off, out
            dbg = self.unpack("<hh2xIIQQ", off + i * rs + 18) if self.debug_info else None
            kind, runs = next(((k, ro) for f, k, ro in KINDS if fl & f), ("unknown", None))
            funcs = [p & 0x0FFFFFFE for p in (s, e) if p]
            cpu = (self.callback_ops(funcs) if kind == "hybrid" else
                   self.sw_kernel(e & 0x0FFFFFFE) if kind == "sw" and e else [])
            first, last = (dbg[0], dbg[1]) if dbg else (None, None)
            nep = (last - first + 1 if dbg else None) if kind in ("blob", "unknown") else 1
            seg = {TAG_CODE: "code", TAG_RAM: "ram", TAG_PARAMS: "params"}.get(blob >> 28, "unknown")
            out.append({
                "index": i, "flags": fl, "kind": kind, "runs_on": runs,
                "flag_names": [n for b, n in enumerate(FLAG_NAMES) if fl >> b & 1],
                "first_epoch": first, "last_epoch": last, "epochs": nep,
                "start": (s & 0x0FFFFFFE) if s else None, "end": (e & 0x0FFFFFFE) if e else None,
                "blob": {"segment": seg, "offset": blob & 0x0FFFFFFF} if blob else None,
                "wait_mask": wait,
                "in_stream_mask": dbg[2] if dbg else None, "out_stream_mask": dbg[3] if dbg else None,
                "estimated_npu_cycles": dbg[4] if dbg else None,
                "estimated_total_cycles": dbg[5] if dbg else None,
                "cpu": cpu, "cpu_known": kind not in ("hybrid", "sw", "unknown") or bool(cpu)})
        raise OracleError("epoch table has no terminator")

    def buffers(self, blocks):
        out, dt = [], DT_111 if self.ver >= (1, 1, 1) else DT_110
        for io in ("input", "output", "internal"):
            tbl = self.getter(self.entry[io])
            if tbl is None:
                continue
            off = self.file_off(tbl)
            for i in range(10000):
                # LL_Buffer_InfoTypeDef [H111] (56 bytes, 1-byte enums): name@0, epoch u16@22,
                # mem_shape@28, mem_ndims u16@32, chpos u8@34, type u8@35, ndims u8@39, shape@44.
                rec = off + i * self.bufinfo_size
                (name,) = self.unpack("<I", rec)
                if name == 0:
                    break
                (epoch,) = self.unpack("<H", rec + 22)
                mshape_p, mndims = self.unpack("<IH", rec + 28)
                tid, ndims, shape_p = self.d[rec + 35], self.d[rec + 39], self.u32(rec + 44)
                blk = [b["index"] for b in blocks if b["first_epoch"] is not None
                       and b["first_epoch"] <= epoch <= b["last_epoch"]]
                out.append({"io": io, "name": self.cstr(name), "epoch": epoch, "type_id": tid,
                            "type": "FXP" if tid == 100 else dt[tid] if tid < len(dt) else "unknown",
                            "shape": self.u32s(shape_p, ndims), "mem_shape": self.u32s(mshape_p, mndims),
                            "block": blk[0] if blk else None})
        return out

    def u32s(self, ptr, n):
        return list(self.unpack("<%dI" % n, self.file_off(ptr))) if ptr and n else []

    def report(self):
        table_offset, blocks = self.blocks()
        dbg = self.debug_info
        count = lambda k: sum(1 for b in blocks if b["kind"] == k)
        ops = {}
        for b in blocks:
            names = [(c["name"], c["via"]) for c in b["cpu"]]
            if not b["cpu_known"]:
                names = [("unknown", "sw_kernel" if b["kind"] == "sw" else "callback")]
            for key in names:
                ops[key] = ops.get(key, 0) + 1
        # Epochs [H111 EpochBlock_Flags_t]: epoch_start marks "First EpochBlock of an Epoch", epoch_end the
        # last; an epoch group counts once, a blob's group its first..last epoch numbers (debug info only).
        n = {"npu": 0, "hybrid": 0, "sw": 0}
        known, group = True, []
        for b in blocks:
            group.append(b)
            if not b["flag_names"] or "epoch_end" not in b["flag_names"]:
                continue
            kinds = {g["kind"] for g in group}
            if "blob" in kinds:
                eps = [g["epochs"] for g in group if g["kind"] == "blob"]
                known = known and None not in eps
                k = sum(e or 0 for e in eps)
            else:
                k = 1
            n["sw" if kinds == {"sw"} else "hybrid" if kinds & {"sw", "hybrid"} else "npu"] += k
            group = []
        return {
            "ll_aton": "%d.%d.%d" % self.ver, "record_size": self.record_size, "debug_info": dbg,
            "table_offset": table_offset, "blocks": blocks, "buffers": self.buffers(blocks),
            "summary": {"blocks": len(blocks), "epochs": sum(n.values()) if known else None,
                        "blob_blocks": count("blob"), "hw_blocks": count("hw"),
                        "hybrid_blocks": count("hybrid"), "sw_blocks": count("sw"),
                        "npu_epochs": n["npu"] if known else None, "hybrid_epochs": n["hybrid"],
                        "sw_epochs": n["sw"], "cpu_epochs": n["hybrid"] + n["sw"],
                        "operations": [{"name": k[0], "via": k[1], "count": c} for k, c in sorted(ops.items())]}}


def branch_target(mn, ops):
    if re.match(r"(b|b[a-z]{2}|cbn?z)(\.[nw])?$", mn) and mn not in ("bl", "blx", "bx"):
        m = re.search(r"0x([0-9a-f]+)\s*$", ops)
        return int(m.group(1), 16) if m else None
    return None


# ---- self test ----------------------------------------------------------------------------
def selftest():
    if not os.path.exists(FIXTURE):
        print("SKIPPED: fixture %s not found" % FIXTURE)
        return 77
    fails = []

    def check(what, got, want):
        if got != want:
            fails.append("%s: got %r, want %r" % (what, got, want))

    r = Model(FIXTURE).report()
    bl, s = r["blocks"], r["summary"]
    check("header", (r["ll_aton"], r["record_size"], r["debug_info"], r["table_offset"]), ("1.1.1", 48, True, 277616))
    check("operations", {o["name"]: o["count"] for o in s["operations"]},
          {"Concat": 8, "DMA_DepthToSpace": 2, "DMA_Outputs_Slice_SplitLike": 4, "DMA_Transpose": 1, "Softmax": 1,
           "Dequantizelinear": 1})
    check("kinds", (s["blocks"], s["blob_blocks"], s["hybrid_blocks"], s["sw_blocks"]), (30, 13, 15, 2))
    check("epochs", (s["epochs"], s["npu_epochs"], s["cpu_epochs"]), (154, 137, 17))
    want = {7: [2, 5, 7, 9, 11, 13, 15, 27], 13: [1, 4], 15: [17, 18, 24, 25], 20: [20]}
    for slot, idx in want.items():
        check("slot %d blocks" % slot, [b["index"] for b in bl if [c.get("slot") for c in b["cpu"]] == [slot]], idx)
    check("sw 22", bl[22]["cpu"], [{"via": "sw_kernel", "node_type": 9, "name": "Softmax"}])
    check("sw 28", bl[28]["cpu"], [{"via": "sw_kernel", "node_type": 42, "name": "Dequantizelinear"}])
    check("block 0", (bl[0]["flag_names"], bl[0]["start"], bl[0]["blob"]),
          (["epoch_start", "epoch_end", "blob", "pure_hw"], 1220, {"segment": "ram", "offset": 140904}))
    check("non-blob epochs", all(b["first_epoch"] == b["last_epoch"] for b in bl if b["kind"] != "blob"), True)
    check("inputs", [(b["io"], b["name"], b["type"]) for b in r["buffers"]][:1], [("input", "Input_3_out_0", "UINT8")])

    # Modified copies of the fixture (offsets found by hand on it): rt_ctx at file 0x4426C,
    # epoch table at 277616, the DMA_DepthToSpace stub's `ldr r4,[r4,#52]` at 0x4A5C.
    d, t, ctx = open(FIXTURE, "rb").read(), 277616, 0x4426C
    ver = lambda v: (ctx + 40, "<I", v)
    nodbg = [(4, "<I", 0x80585D22), (ctx + 56, "<I", 0x1438)] + \
        [(t + 20 * i, "18s2x", d[t + 48 * i:t + 48 * i + 18]) for i in range(31)]   # 20-byte records
    with tempfile.TemporaryDirectory() as tmp:
        def variant(edits):
            b = bytearray(d)
            for off, fmt, val in edits:
                struct.pack_into(fmt, b, off, val)
            p = os.path.join(tmp, "variant.bin")
            open(p, "wb").write(b)
            return Model(p).report()
        for v, dt in ((0x01010100, "UINT8"), (0x01010000, "INT32")):      # 1.1.0: 6 = INT32
            n = variant(nodbg + [ver(v)])
            check("nodbg %x" % v, (n["record_size"], n["debug_info"], n["summary"]["epochs"],
                                   n["buffers"][0]["type"], n["buffers"][1]["block"]), (20, False, None, dt, None))
            check("nodbg cpu", [b["cpu"] for b in n["blocks"]], [b["cpu"] for b in bl])
            check("nodbg epochs", [b["epochs"] for b in n["blocks"]], [None if b["kind"] == "blob" else 1 for b in bl])
        o = variant([ver(0x01010000)])
        check("1.1.0", (o["ll_aton"], o["record_size"], o["blocks"]), ("1.1.0", 48, bl))
        h = variant([(92, "<I", 0x20000069), (96, "<I", 0x20000069), (100, "<I", 0x400013C4)])
        check("26-word header", h, r)                   # words 23..25 moved; code there is unused
        a = variant([ver(0x01010300), (0x4A5C, "<H", 0x6D64)])                # slot 13 -> 21
        check("1.1.3 slot 21", [c["name"] for c in a["blocks"][1]["cpu"]], ["Async_Memcpy"])
    print("".join("FAIL: %s\n" % f for f in fails), end="")
    print("selftest: %s (%d blocks, %s)" % ("FAILED" if fails else "OK", s["blocks"], s["operations"]))
    return 1 if fails else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--selftest":
        return selftest()
    if len(argv) != 2:
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2
    try:
        print(json.dumps(Model(argv[1]).report(), sort_keys=True))
    except (OracleError, OSError, subprocess.CalledProcessError) as e:
        print("epochs_oracle: %s: %s" % (argv[1], e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
