/*
 * mota build-model: C sources -> runtime-loadable NBIN v8.0 model.
 *
 * Compiles with arm-none-eabi-gcc and ST's relocatable flags, links with the
 * project's script (loader/model/mota_model.ld, ST's segment layout), then
 * post-processes the ELF the way ST's generator does (st-reloc-format.md 7.5):
 * header, code, data image, REL table of the R_ARM_ABS32 words in the RW data,
 * params blob with its CRC-32 (appended or split). Relocations the format
 * cannot represent are refused with their type and address. The result must
 * pass mota_nbin_validate before it is written.
 */
#include "cmds.h"
#include "util.h"

#include "mota/err.h"
#include "mota/crc32.h"
#include "mota/le.h"
#include "mota/nbin.h"

#include <elf.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MOTA_MODEL_SDK_DIR
#define MOTA_MODEL_SDK_DIR "loader/model"
#endif

extern char **environ;

#define MAX_ARGS 256

/* Relocation types by their ARM ELF ABI names (glibc's elf.h uses older ones). */
enum {
    RT_NONE = 0, RT_ABS32 = 2, RT_REL32 = 3, RT_THM_CALL = 10, RT_THM_PC8 = 11, RT_GOTOFF = 24, RT_GOTPC = 25,
    RT_GOT_BREL = 26, RT_TARGET1 = 38, RT_V4BX = 40, RT_TARGET2 = 41, RT_THM_MOVW_ABS_NC = 47,
    RT_THM_MOVT_ABS = 48, RT_THM_JUMP19 = 51, RT_THM_PC12 = 54, RT_GOT_PREL = 96, RT_THM_JUMP11 = 102,
    RT_THM_JUMP8 = 103, RT_THM_JUMP24 = 30,
};
#define SEG_FLASH 0x20000000u
#define SEG_RAM 0x40000000u
#define SEG_PARAMS 0x80000000u
#define SEG_LEGACY_RAM 0x80000000u /* the legacy family's RAM tag */
#define SEG_WEIGHTS 0x90000000u    /* legacy weights: bound at init, never in the file */

static void help(FILE *f)
{
    fprintf(f,
            "usage: mota build-model -o network_rel.bin [options] model.c [more.c ...]\n\n"
            "Builds a CPU-executable runtime-loadable model from C sources written against\n"
            "loader/model/mota_model.h, in the layout of ST's relocatable models.\n"
            "  -o, --out FILE       model to write\n"
            "      --family F       npu: NBIN v8.0, the Neural-ART layout (default); legacy: X-CUBE-AI\n"
            "                       reloc v2.0, driven through ST's ai_rel_network API\n"
            "      --split FILE     write the params (weights) to FILE instead of appending them\n"
            "      --cpu NAME       -mcpu for arm-none-eabi-gcc (default cortex-m55); sets the CPU part\n"
            "                       number of the flags word (cortex-m4, -m7, -m33, -m55, -m85)\n"
            "      --secure         build for the secure state (-mcmse; sets the SECURE flag)\n"
            "      --opt LEVEL      optimisation, e.g. -O2 (default -Os)\n"
            "  -I DIR, -D NAME[=V]  passed to the compiler\n"
            "      --sdk DIR        model SDK (default: %s)\n"
            "      --cc PATH        compiler (default arm-none-eabi-gcc)\n"
            "      --keep DIR       keep the intermediate files (objects, ELF, map) in DIR\n"
            "      --verbose        print the commands\n",
            MOTA_MODEL_SDK_DIR);
}

struct argv_buf {
    char *v[MAX_ARGS];
    int n;
};

static void arg(struct argv_buf *a, const char *s)
{
    if (a->n < MAX_ARGS - 1) {
        a->v[a->n++] = (char *)s;
        a->v[a->n] = NULL;
    }
}

static int run_cmd(struct argv_buf *a, bool verbose)
{
    pid_t pid;
    int st;
    if (verbose) {
        for (int i = 0; i < a->n; i++)
            fprintf(stderr, "%s%s", i ? " " : "", a->v[i]);
        fputc('\n', stderr);
    }
    if (a->n >= MAX_ARGS - 1)
        return tool_fail(MOTA_ERR_ARG, "too many compiler arguments");
    /* posix_spawnp returns the error number, it does not set errno */
    int e = posix_spawnp(&pid, a->v[0], NULL, NULL, a->v, environ);
    if (e != 0)
        return tool_fail(MOTA_ERR_IO, "cannot run %s: %s", a->v[0], strerror(e));
    if (waitpid(pid, &st, 0) < 0)
        return tool_fail(MOTA_ERR_IO, "waiting for %s: %s", a->v[0], strerror(errno));
    /* a non-zero exit is the sources refused (its messages are above); a signal is the tool failing */
    if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
        return tool_fail(MOTA_ERR_BUILD, "%s exited with status %d", a->v[0], WEXITSTATUS(st));
    if (!WIFEXITED(st))
        return tool_fail(MOTA_ERR_IO, "%s was killed by signal %d", a->v[0], WTERMSIG(st));
    return MOTA_OK;
}

/* ---- ELF reading (32-bit little-endian ARM, as the link produced it) ---- */

struct elf {
    const uint8_t *d;
    size_t len;
    const Elf32_Shdr *sh;
    unsigned nsh;
    const char *shstr;
    const Elf32_Sym *sym;
    unsigned nsym;
    const char *str;
    size_t str_len;
};

static const Elf32_Shdr *section(const struct elf *e, const char *name)
{
    for (unsigned i = 0; i < e->nsh; i++) {
        if (strcmp(e->shstr + e->sh[i].sh_name, name) == 0)
            return &e->sh[i];
    }
    return NULL;
}

static int elf_open(const uint8_t *d, size_t len, struct elf *e)
{
    const Elf32_Ehdr *h = (const void *)d;
    memset(e, 0, sizeof(*e));
    e->d = d;
    e->len = len;
    if (len < sizeof(*h) || memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS32 ||
        h->e_ident[EI_DATA] != ELFDATA2LSB || h->e_machine != EM_ARM)
        return tool_fail(MOTA_ERR_ARG, "the link did not produce a 32-bit little-endian ARM ELF");
    if (h->e_shoff + (uint64_t)h->e_shnum * sizeof(Elf32_Shdr) > len || h->e_shstrndx >= h->e_shnum)
        return tool_fail(MOTA_ERR_ARG, "ELF section table out of bounds");
    e->sh = (const void *)(d + h->e_shoff);
    e->nsh = h->e_shnum;
    for (unsigned i = 0; i < e->nsh; i++) {
        if (e->sh[i].sh_type != SHT_NOBITS && (uint64_t)e->sh[i].sh_offset + e->sh[i].sh_size > len)
            return tool_fail(MOTA_ERR_ARG, "ELF section %u out of bounds", i);
    }
    e->shstr = (const char *)d + e->sh[h->e_shstrndx].sh_offset;
    const Elf32_Shdr *symtab = section(e, ".symtab"), *strtab = section(e, ".strtab");
    if (symtab == NULL || strtab == NULL)
        return tool_fail(MOTA_ERR_ARG, "ELF has no symbol table");
    e->sym = (const void *)(d + symtab->sh_offset);
    e->nsym = symtab->sh_size / sizeof(Elf32_Sym);
    e->str = (const char *)d + strtab->sh_offset;
    e->str_len = strtab->sh_size;
    return MOTA_OK;
}

static const Elf32_Sym *symbol(const struct elf *e, const char *name)
{
    for (unsigned i = 0; i < e->nsym; i++) {
        if (e->sym[i].st_name < e->str_len && strcmp(e->str + e->sym[i].st_name, name) == 0)
            return &e->sym[i];
    }
    return NULL;
}

static const char *reloc_name(unsigned t)
{
    switch (t) {
    case RT_ABS32: return "R_ARM_ABS32";
    case RT_REL32: return "R_ARM_REL32";
    case RT_THM_CALL: return "R_ARM_THM_CALL";
    case RT_THM_JUMP24: return "R_ARM_THM_JUMP24";
    case RT_GOT_BREL: return "R_ARM_GOT_BREL";
    case RT_GOTOFF: return "R_ARM_GOTOFF";
    case RT_GOTPC: return "R_ARM_GOTPC";
    case RT_THM_MOVW_ABS_NC: return "R_ARM_THM_MOVW_ABS_NC";
    case RT_THM_MOVT_ABS: return "R_ARM_THM_MOVT_ABS";
    case RT_TARGET1: return "R_ARM_TARGET1";
    case RT_TARGET2: return "R_ARM_TARGET2";
    default: return "unsupported type";
    }
}

struct built {
    uint8_t *image;
    size_t image_len;
    uint8_t *params;
    size_t params_len;
};

static size_t round8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

/* A growable list of 32-bit words. */
struct words {
    uint32_t *v;
    size_t n, cap;
};

static int words_add(struct words *w, uint32_t v)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        uint32_t *n = realloc(w->v, cap * sizeof(*n));
        if (n == NULL)
            return tool_fail(MOTA_ERR_NOSPC, "out of memory");
        w->v = n;
        w->cap = cap;
    }
    w->v[w->n++] = v;
    return MOTA_OK;
}

/*
 * Legacy family: the weights are not relocated by tags; ST's runtime gets
 * their address at init. Every word that holds a weights address (a GOT
 * slot, or an absolute address in RW data) is zeroed in the file and listed
 * in the runtime's bind table (RW offset, weights offset), which it applies
 * at init with the address the application passes.
 */
#define NOT_WEIGHTS 1 /* bind_weights: the word holds no weights address */
static int bind_weights(const struct elf *e, const Elf32_Shdr *data, struct words *binds, uint32_t at)
{
    uint32_t v = mota_get32(e->d + data->sh_offset + (at - data->sh_addr));
    if ((v >> 28) != (SEG_WEIGHTS >> 28))
        return NOT_WEIGHTS;
    if (words_add(binds, at - data->sh_addr) != MOTA_OK || words_add(binds, v - SEG_WEIGHTS) != MOTA_OK)
        return MOTA_ERR_NOSPC;
    return MOTA_OK; /* the word is zeroed in the file */
}

/* The post-processor proper. */
static int postprocess(const struct elf *e, bool split, bool legacy, struct built *b)
{
    const Elf32_Shdr *flash = section(e, ".flash"), *data = section(e, ".data"), *bss = section(e, ".bss");
    const Elf32_Shdr *params = section(e, ".params_0");
    const Elf32_Sym *entries = symbol(e, "_network_entries"), *ctx = symbol(e, "_network_rt_ctx"),
                    *desc = symbol(e, legacy ? "_mota_weight_binds" : "_params_desc");
    const uint32_t seg_ram = legacy ? SEG_LEGACY_RAM : SEG_RAM, seg_params = legacy ? SEG_WEIGHTS : SEG_PARAMS;
    const unsigned header_words = legacy ? 25 : 24;
    struct words relw = {0}, binds = {0};
    uint32_t *rel = NULL;
    size_t nrel = 0;
    int ret = MOTA_ERR_ARG;

    if (flash == NULL || data == NULL || bss == NULL)
        return tool_fail(MOTA_ERR_ARG, "ELF lacks .flash, .data or .bss: not linked with the model SDK's script?");
    if (entries == NULL || ctx == NULL || desc == NULL)
        return tool_fail(MOTA_ERR_ARG, "model lacks MOTA_MODEL() (_network_entries, _network_rt_ctx, %s)",
                         legacy ? "_mota_weight_binds" : "_params_desc");
    if (flash->sh_addr != SEG_FLASH || data->sh_addr != seg_ram || (params && params->sh_addr != seg_params))
        return tool_fail(MOTA_ERR_ARG, "segments are not at their tag addresses");
    if (flash->sh_size < header_words * 4 || mota_get32(e->d + flash->sh_offset) != MOTA_NBIN_MAGIC)
        return tool_fail(MOTA_ERR_ARG, ".flash does not start with the NBIN header");

    /* Relocations: keep ABS32 in the RW data, refuse what cannot move. */
    for (unsigned i = 0; i < e->nsh; i++) {
        const Elf32_Shdr *rs = &e->sh[i];
        if (rs->sh_type == SHT_RELA)
            return tool_fail(MOTA_ERR_ARG, "RELA relocations are not produced by GCC for ARM; cannot handle");
        if (rs->sh_type != SHT_REL || rs->sh_info >= e->nsh)
            continue;
        const char *target = e->shstr + e->sh[rs->sh_info].sh_name;
        bool in_data = strcmp(target, ".data") == 0, in_flash = strcmp(target, ".flash") == 0;
        if (!in_data && !in_flash) {
            if (strncmp(target, ".debug", 6) == 0)
                continue;
            return tool_fail(MOTA_ERR_ARG, "relocations against section %s cannot be represented", target);
        }
        const Elf32_Rel *r = (const void *)(e->d + rs->sh_offset);
        for (size_t k = 0; k < rs->sh_size / sizeof(*r); k++) {
            unsigned type = ELF32_R_TYPE(r[k].r_info), si = ELF32_R_SYM(r[k].r_info);
            uint32_t at = r[k].r_offset;
            uint32_t s_addr = si < e->nsym ? e->sym[si].st_value : 0;
            if (type == RT_NONE || type == RT_V4BX || si == 0)
                continue;
            if (at >= entries->st_value && at < entries->st_value + entries->st_size)
                continue; /* the entry table: the loader uses only the offsets */
            switch (type) {
            case RT_ABS32:
                if (in_flash) {
                    tool_fail(MOTA_ERR_ARG,
                              "absolute address (R_ARM_ABS32) in read-only code or data at 0x%08x: "
                              "it cannot be patched in XIP mode (make the object non-const)", at);
                    goto fail;
                }
                if (legacy && (ret = bind_weights(e, data, &binds, at)) != NOT_WEIGHTS) {
                    if (ret != MOTA_OK)
                        goto fail;
                    break;
                }
                if (words_add(&relw, at) != MOTA_OK)
                    goto fail;
                break;
            case RT_GOT_BREL:
            case RT_GOT_PREL:
                break; /* a GOT slot: relocated by the GOT pass */
            case RT_REL32:
            case RT_THM_CALL:
            case RT_THM_JUMP24:
            case RT_THM_JUMP19:
            case RT_THM_JUMP11:
            case RT_THM_JUMP8:
            case RT_THM_PC8:
            case RT_THM_PC12:
                /* PC-relative: fine within one segment, broken across segments
                 * (XIP moves code and RAM independently) */
                if ((s_addr >> 28) != (at >> 28)) {
                    tool_fail(MOTA_ERR_ARG, "PC-relative %s at 0x%08x reaches another segment (0x%08x)",
                              reloc_name(type), at, s_addr);
                    goto fail;
                }
                break;
            default:
                tool_fail(MOTA_ERR_ARG,
                          "relocation type %u (%s) at 0x%08x cannot be represented in an NBIN model "
                          "(compile with -fpic -msingle-pic-base -mno-pic-data-is-text-relative)",
                          type, reloc_name(type), at);
                goto fail;
            }
        }
    }
    if (legacy) { /* GOT slots of weights: bound at init too */
        const Elf32_Sym *gs = symbol(e, "__got_start"), *ge = symbol(e, "__got_end");
        if (gs == NULL || ge == NULL || gs->st_value < data->sh_addr || ge->st_value > data->sh_addr + data->sh_size) {
            tool_fail(MOTA_ERR_ARG, "the GOT is not inside .data");
            goto fail;
        }
        for (uint32_t at = gs->st_value; at + 4 <= ge->st_value; at += 4) {
            if ((ret = bind_weights(e, data, &binds, at)) != MOTA_OK && ret != NOT_WEIGHTS)
                goto fail;
        }
    }
    rel = relw.v;
    nrel = relw.n;
    /* ELF order is ascending within .rel.data; make it so regardless */
    for (size_t i = 1; i < nrel; i++) {
        for (size_t j = i; j > 0 && rel[j - 1] > rel[j]; j--) {
            uint32_t t = rel[j];
            rel[j] = rel[j - 1];
            rel[j - 1] = t;
        }
    }

    const uint8_t *fl = e->d + flash->sh_offset;
    uint32_t ro = mota_get32(fl + 16) & 0x0FFFFFFFu; /* LOADADDR(.data) */
    if (ro < flash->sh_size || ro % (legacy ? 4 : 8) != 0) {
        tool_fail(MOTA_ERR_ARG, "data load address 0x%08x is not after the flash section", ro);
        goto fail;
    }
    /* legacy files have no padding (code, data, REL, weights); NPU ones align each part to 8 */
    size_t data_len = data->sh_size;
    size_t rel_off = legacy ? ro + data_len : round8(ro + data_len);
    size_t rel_end = rel_off + 4 * nrel;
    size_t img_len = legacy ? rel_end : round8(rel_end);
    size_t plen = params ? params->sh_size : 0, plen8 = legacy ? plen : round8(plen);
    if (legacy) {
        if (desc->st_size < 4 || binds.n / 2 > (desc->st_size / 4 - 1) / 2) {
            tool_fail(MOTA_ERR_ARG, "%zu uses of weights: more than the runtime's bind table holds (%u)",
                      binds.n / 2, (unsigned)((desc->st_size / 4 - 1) / 2));
            goto fail;
        }
        if (desc->st_value < SEG_FLASH || desc->st_value - SEG_FLASH + desc->st_size > flash->sh_size ||
            ctx->st_value < seg_ram || ctx->st_value - seg_ram + 32 > data_len) {
            tool_fail(MOTA_ERR_ARG, "bind table or runtime context outside its section");
            goto fail;
        }
    }

    b->image_len = img_len + (split ? 0 : plen8);
    b->image = calloc(1, b->image_len);
    b->params_len = split ? plen8 : 0;
    b->params = split ? calloc(1, plen8 ? plen8 : 1) : NULL;
    if (b->image == NULL || (split && b->params == NULL)) {
        tool_fail(MOTA_ERR_NOSPC, "out of memory");
        goto fail;
    }
    memcpy(b->image, fl, flash->sh_size);
    memset(b->image + flash->sh_size, 0xff, ro - flash->sh_size); /* ST's flash fill */
    memcpy(b->image + ro, e->d + data->sh_offset, data_len);
    for (size_t i = 0; i < nrel; i++)
        mota_put32(b->image + rel_off + 4 * i, seg_ram | (rel[i] - seg_ram));

    uint8_t *blob = split ? b->params : b->image + img_len;
    if (plen > 0)
        memcpy(blob, e->d + params->sh_offset, plen);

    mota_put32(b->image + 36, SEG_FLASH | (uint32_t)rel_off);
    mota_put32(b->image + 40, SEG_FLASH | (uint32_t)rel_end);
    if (legacy) {
        bool appended = !split && plen > 0;
        mota_put32(b->image + 44, appended ? SEG_FLASH | (uint32_t)img_len : 0); /* weights_start */
        mota_put32(b->image + 48, appended ? SEG_FLASH | (uint32_t)(img_len + plen) : 0);
        mota_put32(b->image + ro + (ctx->st_value - seg_ram) + 28, (uint32_t)plen); /* rt_ctx.weights_size */
        uint8_t *bt = b->image + (desc->st_value - SEG_FLASH);
        mota_put32(bt, (uint32_t)(binds.n / 2));
        for (size_t i = 0; i < binds.n; i++)
            mota_put32(bt + 4 + 4 * i, binds.v[i]);
        for (size_t i = 0; i < binds.n; i += 2)
            mota_put32(b->image + ro + binds.v[i], 0); /* no weights address in the file: 0 is left alone by the loader */
        free(relw.v);
        free(binds.v);
        return MOTA_OK;
    }
    free(relw.v);
    free(binds.v);
    uint32_t crc = mota_crc32(0, blob, plen8);
    mota_put32(b->image + 48, (split || plen == 0) ? 0 : (uint32_t)img_len);

    /* runtime context and the params pool descriptor, now that the blob is known */
    uint8_t *rc = b->image + ro + (ctx->st_value - SEG_RAM);
    uint8_t *dp = b->image + ro + (desc->st_value - SEG_RAM);
    if (ctx->st_value - SEG_RAM + 68 > data_len || desc->st_value - SEG_RAM + 40 > data_len)
        return tool_fail(MOTA_ERR_ARG, "runtime context or descriptors outside .data");
    mota_put32(rc + 28, (uint32_t)plen);
    mota_put32(rc + 48, (uint32_t)plen8);
    mota_put32(rc + 52, crc);
    if (plen > 0) {
        mota_put32(dp + 4, 0x01010100u); /* RELOC, PARAM, READ, pool 0 */
        mota_put32(dp + 8, 0);
        mota_put32(dp + 12, 0);
        mota_put32(dp + 16, (uint32_t)plen);
    }
    return MOTA_OK;
fail:
    free(relw.v);
    free(binds.v);
    return MOTA_ERR_ARG;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int cmd_build_model(int argc, char **argv)
{
    enum { O_SPLIT = 256, O_CPU, O_SECURE, O_OPT, O_SDK, O_CC, O_KEEP, O_VERBOSE, O_FAMILY };
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"out", required_argument, 0, 'o'}, {"split", required_argument, 0, O_SPLIT},
        {"cpu", required_argument, 0, O_CPU}, {"secure", no_argument, 0, O_SECURE}, {"opt", required_argument, 0, O_OPT},
        {"sdk", required_argument, 0, O_SDK}, {"cc", required_argument, 0, O_CC}, {"keep", required_argument, 0, O_KEEP},
        {"verbose", no_argument, 0, O_VERBOSE}, {"family", required_argument, 0, O_FAMILY}, {0, 0, 0, 0}};
    const char *out = NULL, *split = NULL, *cpu = "cortex-m55", *opt = "-Os", *sdk = MOTA_MODEL_SDK_DIR;
    const char *cc = "arm-none-eabi-gcc", *keep = NULL;
    const char *user_flags[64];
    int n_user = 0, c, ret, rc = EXIT_USAGE;
    bool secure = false, verbose = false, legacy = false, user_part = false;
    static char paths[MAX_ARGS][4096];
    int n_paths = 0;
    /* the directory leaves room for the names under it */
    char dir[3072] = "", cpu_flag[128], part_flag[64], sdk_inc[4096], ld[4096], rt[2][4096], elf_path[4096],
        map_flag[4200];
    struct built b = {0};
    struct mapped m = {0};

    optind = 1;
    while ((c = tool_getopt(argc, argv, "ho:I:D:", opts, "build-model")) != -1) {
        switch (c) {
        case 'h': help(stdout); return EXIT_OK;
        case 'o': out = optarg; break;
        case O_SPLIT: split = optarg; break;
        case O_CPU: cpu = optarg; break;
        case O_SECURE: secure = true; break;
        case O_OPT: opt = optarg; break;
        case O_SDK: sdk = optarg; break;
        case O_CC: cc = optarg; break;
        case O_KEEP: keep = optarg; break;
        case O_VERBOSE: verbose = true; break;
        case O_FAMILY:
            if (strcmp(optarg, "legacy") != 0 && strcmp(optarg, "npu") != 0) {
                tool_usage_err("build-model", "--family is npu or legacy, not %s", optarg);
                return EXIT_USAGE;
            }
            legacy = strcmp(optarg, "legacy") == 0;
            break;
        case 'I':
        case 'D':
            if (n_user + 2 > 64) {
                tool_usage_err("build-model", "too many -I/-D options");
                return EXIT_USAGE;
            }
            user_flags[n_user++] = c == 'I' ? "-I" : "-D";
            user_flags[n_user++] = optarg;
            user_part |= c == 'D' && strncmp(optarg, "MOTA_MODEL_CPU_PART", 19) == 0;
            break;
        default: return EXIT_USAGE;
        }
    }
    if (out == NULL || optind >= argc)
        return tool_usage_err("build-model", "needs -o OUT and at least one source");
    if (argc - optind > 64) {
        tool_usage_err("build-model", "at most 64 sources");
        return EXIT_USAGE;
    }
    /* an output over a source or over the other output: refused before compiling */
    for (int i = optind; i < argc; i++)
        tool_note_input(argv[i]);
    if (split != NULL && tool_same_file(out, split)) {
        tool_fail(MOTA_ERR_SAME_FILE, "-o %s and --split %s are the same file", out, split);
        return EXIT_IO;
    }
    if (tool_out_check(out) != MOTA_OK || (split != NULL && tool_out_check(split) != MOTA_OK))
        return EXIT_IO;
    /* the CPU part number the flags word carries, from -mcpu (SCB CPUID[15:4]) */
    static const struct { const char *cpu; unsigned part; } parts[] = {
        {"cortex-m0plus", 0xC60}, {"cortex-m3", 0xC23}, {"cortex-m4", 0xC24}, {"cortex-m7", 0xC27},
        {"cortex-m33", 0xD21}, {"cortex-m55", 0xD22}, {"cortex-m85", 0xD23}};
    unsigned part = 0;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        size_t n = strlen(parts[i].cpu);
        if (strncmp(cpu, parts[i].cpu, n) == 0 && (cpu[n] == 0 || cpu[n] == '+'))
            part = parts[i].part;
    }
    if (part == 0 && !user_part) {
        tool_usage_err("build-model", "no CPU part number known for --cpu %s: pass -D MOTA_MODEL_CPU_PART=0x...", cpu);
        return EXIT_USAGE;
    }
    snprintf(part_flag, sizeof(part_flag), "-DMOTA_MODEL_CPU_PART=0x%03Xu", part);
    if ((keep != NULL && strlen(keep) >= sizeof(dir)) || strlen(sdk) >= 2048) {
        tool_usage_err("build-model", "path too long");
        return EXIT_USAGE;
    }
    rc = EXIT_IO;
    if (keep != NULL) {
        snprintf(dir, sizeof(dir), "%s", keep);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            tool_fail(MOTA_ERR_IO, "%s: %s", dir, strerror(errno));
            return EXIT_IO;
        }
    } else {
        const char *tmp = getenv("TMPDIR");
        if (snprintf(dir, sizeof(dir), "%s/mota-build-XXXXXX", tmp ? tmp : "/tmp") >= (int)sizeof(dir)) {
            tool_fail(MOTA_ERR_IO, "TMPDIR too long");
            return EXIT_IO;
        }
        if (mkdtemp(dir) == NULL) {
            tool_fail(MOTA_ERR_IO, "temporary directory: %s", strerror(errno));
            return EXIT_IO;
        }
    }
    snprintf(cpu_flag, sizeof(cpu_flag), "-mcpu=%s", cpu);
    snprintf(sdk_inc, sizeof(sdk_inc), "-I%s", sdk);
    snprintf(ld, sizeof(ld), "-Wl,-T,%s/%s", sdk, legacy ? "mota_legacy.ld" : "mota_model.ld");
    snprintf(rt[0], sizeof(rt[0]), "%s/mota_model_rt.c", sdk);
    snprintf(rt[1], sizeof(rt[1]), "%s/mota_legacy_rt.c", sdk);
    snprintf(elf_path, sizeof(elf_path), "%s/model.elf", dir);
    snprintf(map_flag, sizeof(map_flag), "-Wl,-Map,%s/model.map", dir);

    /* ST's relocatable code model: GOT through r9, no text-relative data. */
    static const char *common[] = {"-mthumb", "-mfloat-abi=hard", "-fpic", "-msingle-pic-base",
                                   "-mpic-register=r9", "-mno-pic-data-is-text-relative", "-ffreestanding",
                                   "-fno-builtin", "-nostdlib", "-ffunction-sections", "-fdata-sections",
                                   "-fno-common", "-fvisibility=hidden", "-fno-unwind-tables",
                                   "-fno-asynchronous-unwind-tables", "-std=gnu11", "-Wall", "-Werror"};
    int n_src = argc - optind, n_rt = legacy ? 2 : 1;
    for (int i = 0; i < n_src + n_rt; i++) {
        const char *src = i < n_src ? argv[optind + i] : rt[i - n_src];
        struct argv_buf a = {.n = 0};
        snprintf(paths[n_paths], sizeof(paths[0]), "%s/obj%d.o", dir, i);
        arg(&a, cc);
        arg(&a, cpu_flag);
        for (size_t k = 0; k < sizeof(common) / sizeof(common[0]); k++)
            arg(&a, common[k]);
        arg(&a, opt);
        if (secure)
            arg(&a, "-mcmse");
        if (legacy)
            arg(&a, "-DMOTA_MODEL_LEGACY");
        if (!user_part)
            arg(&a, part_flag);
        arg(&a, sdk_inc);
        for (int k = 0; k < n_user; k++)
            arg(&a, user_flags[k]);
        arg(&a, "-c");
        arg(&a, src);
        arg(&a, "-o");
        arg(&a, paths[n_paths++]);
        if ((ret = run_cmd(&a, verbose)) != MOTA_OK) {
            rc = ret == MOTA_ERR_BUILD ? EXIT_INVALID : EXIT_IO;
            goto done;
        }
    }
    struct argv_buf l = {.n = 0};
    arg(&l, cc);
    arg(&l, cpu_flag);
    arg(&l, "-mthumb");
    arg(&l, "-mfloat-abi=hard");
    arg(&l, "-nostdlib");
    arg(&l, "-nostartfiles");
    arg(&l, ld);
    arg(&l, "-Wl,--emit-relocs");
    arg(&l, "-Wl,--gc-sections");
    arg(&l, "-Wl,-e,0");
    arg(&l, map_flag);
    arg(&l, "-o");
    arg(&l, elf_path);
    for (int i = 0; i < n_paths; i++)
        arg(&l, paths[i]);
    arg(&l, "-lgcc");
    if ((ret = run_cmd(&l, verbose)) != MOTA_OK) {
        rc = ret == MOTA_ERR_BUILD ? EXIT_INVALID : EXIT_IO;
        goto done;
    }

    if (tool_map(elf_path, &m) != MOTA_OK)
        goto done;
    struct elf e;
    rc = EXIT_INVALID;
    if (elf_open(m.data, m.len, &e) != MOTA_OK || postprocess(&e, split != NULL, legacy, &b) != MOTA_OK)
        goto done;

    struct mota_nbin_info info;
    ret = mota_nbin_validate(b.image, b.image_len, &info);
    if (ret == MOTA_OK)
        ret = mota_nbin_check_params(&info, split ? b.params : b.image, split ? b.params_len : b.image_len);
    if (ret != MOTA_OK) {
        tool_fail(ret, "the built model does not validate (a builder bug or an unsupported construct)");
        goto done;
    }
    rc = EXIT_IO;
    struct outfile o;
    if (tool_out_open(&o, out, 0644) != MOTA_OK)
        goto done;
    if (tool_out_write(&o, b.image, b.image_len) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
        tool_out_abort(&o);
        goto done;
    }
    if (split != NULL) {
        if (tool_out_open(&o, split, 0644) != MOTA_OK)
            goto done;
        if (tool_out_write(&o, b.params, b.params_len) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
            tool_out_abort(&o);
            goto done;
        }
    }
    printf("wrote %s: %zu bytes (RO %u, RW %u, GOT %u, REL %u, %s %u%s), exec RAM XIP %u / COPY %u\n", out,
           b.image_len, info.ro_size, info.rw_size, (info.got_end - info.got_off) / 4, info.rel_count,
           legacy ? "weights" : "params", info.params_len, split ? " split" : "", info.exec_ram_xip, info.exec_ram_copy);
    rc = EXIT_OK;
done:
    tool_unmap(&m);
    free(b.image);
    free(b.params);
    if (keep == NULL && dir[0] != '\0')
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return rc;
}
