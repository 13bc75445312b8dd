/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the agent's life on hostile but validly signed containers.
 *
 * Input: [fix] [n] [n op bytes] [u16 LE length of A] [container A] [container B]
 *   fix   which of fuzz_sign.h's fixes A and B get (bits 0-2; the signer makes mutants
 *         authentic again), bit 7: B's bytes are a forged journal instead, laid on the
 *         flash before the first boot;
 *   ops   a script run on one device from a blank flash: uploads (whole, in chunks of
 *         varying size, or cut off halfway and resumed later), reboots with a reset cause,
 *         confirm, rollback, self-test, an inference fault, key revocation, abort, the
 *         simulated model's mode, and power cuts (clean or torn) at a chosen flash operation,
 *         after which the device boots again and the script goes on.
 *
 * Nothing may crash or touch memory out of bounds (ASan), every result must be a reason code,
 * and the device must keep its promises: it boots after any power cut, an active model is
 * installed, and the anti-rollback floor never goes down. */
#include "fuzz_device.h"

#include <setjmp.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum op {
    OP_UPLOAD_A,
    OP_UPLOAD_B,
    OP_REBOOT,
    OP_CONFIRM,
    OP_ROLLBACK,
    OP_SELFTEST,
    OP_FAULT,
    OP_REVOKE,
    OP_CUT,
    OP_ABORT,
    OP_SIM_MODE,
    OP_QUERY,
};

static struct mota_posix_device d;
static jmp_buf powered_off;
static struct fuzz_script sc;
static uint64_t floor_seq[FUZZ_MODELS]; /* each model's anti-rollback floor so far */
static bool forged;                     /* the journal was forged: no promise holds */

static void power_cut(void *ctx)
{
    (void)ctx;
    longjmp(powered_off, 1);
}

static bool trace; /* MOTA_FUZZ_TRACE=1: each operation and its result on stderr (replaying a finding) */

static void known(int ret)
{
    if (trace && ret != MOTA_OK)
        fprintf(stderr, "  -> %s\n", mota_err_name(ret) ? mota_err_name(ret) : "?");
    if (ret != MOTA_OK && mota_err_name(ret) == NULL)
        abort(); /* every result is a reason code */
}

/* Container c from offset 0 (the device answers the head with where an interrupted upload of it
 * resumes), in chunks of a size chosen by arg & 3; arg & 4: the sender stops halfway, as a dropped link
 * would; arg & 8: the fourth chunk resends the third. */
static void upload(struct mota_agent *a, unsigned c, unsigned arg)
{
    const uint8_t *p = sc.cont[c];
    size_t n = sc.cont_len[c], stop = (arg & 4) ? n / 2 : n;
    static const uint16_t chunks[4] = {509, 61, 1021, 4093}; /* odd sizes: across program units and the head */
    uint32_t chunk = chunks[arg & 3];
    uint32_t off = 0;
    bool resend = arg & 8;
    for (unsigned i = 0; i < 1024 && off < stop; i++) {
        if (resend && i == 3 && off >= chunk) {
            off -= chunk; /* a stale chunk, as after a lost answer: refused, and the sender starts over */
            resend = false;
        }
        size_t len = stop - off < chunk ? stop - off : chunk;
        int r = mota_agent_write(a, off, p + off, len);
        if (r < 0 || trace)
            known(r < 0 ? r : MOTA_OK);
        if (r < 0) {
            if (r == MOTA_ERR_UPLOAD_OFFSET && off != 0) /* the device lost the upload: start over */
                off = 0;
            else
                return;
            continue;
        }
        off = (uint32_t)r;
    }
}

static void check(const struct mota_agent *a)
{
    if (!forged)
        fuzz_device_check(a, floor_seq);
}

static int boot(struct mota_agent *a, enum mota_reset_cause cause)
{
    d.cause = cause;
    int ret = mota_agent_init(a, &d.cfg);
    known(ret);
    return ret;
}

static void query(const struct mota_agent *a, unsigned m)
{
    struct mota_agent_model_info info;
    struct mota_agent_previous prev;
    known(mota_agent_model_info(a, m, &info));
    known(mota_agent_previous(a, m, &prev));
    known(mota_agent_last_error(a, m));
    (void)mota_agent_upload_offset(a);
    (void)mota_agent_receiving(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_device_setup(&d);
    fuzz_device_reset(&d);
    trace = getenv("MOTA_FUZZ_TRACE") != NULL;
    mota_posix_flash_on_cut(&d.pf, power_cut, NULL);
    struct mota_agent *agent = &d.device.agent;
    if (!fuzz_script_read(&sc, data, size))
        return 0;
    unsigned fix = sc.fix, n_ops = sc.n_ops;
    const uint8_t *ops = sc.ops;
    fuzz_resign(sc.cont[0], sc.cont_len[0], fix & FUZZ_FIX_ALL);
    forged = fix & 0x80;
    if (forged) {
        memcpy(d.pf.mem, sc.cont[1], sc.cont_len[1] < FUZZ_JOURNAL ? sc.cont_len[1] : FUZZ_JOURNAL);
        sc.cont_len[1] = 0;
    } else {
        fuzz_resign(sc.cont[1], sc.cont_len[1], fix & FUZZ_FIX_ALL);
    }

    memset(floor_seq, 0, sizeof(floor_seq));
    if (boot(agent, MOTA_RESET_POWER_ON) != MOTA_OK) {
        if (!forged)
            abort(); /* a blank flash always boots */
        return 0;
    }
    volatile unsigned i = 0;
    if (setjmp(powered_off) != 0) {
        /* the power came back: the device boots from what the flash holds, and the script goes on */
        mota_posix_flash_cut(&d.pf, 0, false);
        mota_posix_flash_power_on(&d.pf);
        if (trace)
            fprintf(stderr, "power cut: boot\n");
        if (boot(agent, MOTA_RESET_POWER_ON) != MOTA_OK) {
            if (!forged)
                abort(); /* a power cut never bricks the device */
            return 0;
        }
        check(agent);
        i++;
    }
    for (; i < n_ops; i++) {
        unsigned op = ops[i] & 15u, arg = ops[i] >> 4, m = arg & 1u;
        if (trace)
            fprintf(stderr, "op %u: %u arg %u\n", (unsigned)i, op, arg);
        switch (op) {
        case OP_UPLOAD_A:
        case OP_UPLOAD_B: upload(agent, op - OP_UPLOAD_A, arg); break;
        case OP_REBOOT:
            if (boot(agent, (enum mota_reset_cause)(arg & 3u)) != MOTA_OK) {
                if (!forged)
                    abort();
                return 0;
            }
            break;
        case OP_CONFIRM: known(mota_agent_confirm(agent, m)); break;
        case OP_ROLLBACK: known(mota_agent_rollback(agent, m)); break;
        case OP_SELFTEST: known(mota_agent_selftest(agent, m)); break;
        case OP_FAULT:
            known(mota_agent_model_fault(agent, m, (arg & 2) ? MOTA_ERR_SELFTEST_TIMEOUT : MOTA_ERR_SELFTEST_FAULT));
            break;
        case OP_REVOKE: known(mota_agent_revoke_keys(agent, arg)); break;
        case OP_CUT: mota_posix_flash_cut(&d.pf, fuzz_cut_op(arg), arg & 1u); break;
        case OP_ABORT: known(mota_agent_abort(agent)); break;
        case OP_SIM_MODE: d.sim.mode = (enum mota_sim_mode)(arg % 3u); break;
        default: query(agent, m); break;
        }
        check(agent);
    }
    return 0;
}
