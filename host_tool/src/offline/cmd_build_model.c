/* SPDX-License-Identifier: Apache-2.0 */
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

#include "common/files.h"
#include "common/util.h"

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
    RT_NONE = 0,
    RT_ABS32 = 2,
    RT_REL32 = 3,
    RT_THM_CALL = 10,
    RT_THM_PC8 = 11,
    RT_GOTOFF = 24,
    RT_GOTPC = 25,
    RT_GOT_BREL = 26,
    RT_TARGET1 = 38,
    RT_V4BX = 40,
    RT_TARGET2 = 41,
    RT_THM_MOVW_ABS_NC = 47,
    RT_THM_MOVT_ABS = 48,
    RT_THM_JUMP19 = 51,
    RT_THM_PC12 = 54,
    RT_GOT_PREL = 96,
    RT_THM_JUMP11 = 102,
    RT_THM_JUMP8 = 103,
    RT_THM_JUMP24 = 30,
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

/* What the post-processor reads of the linked model, and where its family puts it. */
struct parts {
    const Elf32_Shdr *flash, *data, *params;
    const Elf32_Sym *entries, *ctx, *desc; /* desc: the params descriptor, or the legacy bind table */
    bool legacy;
    uint32_t seg_ram, seg_params;
    unsigned header_words;
};

/* Where each part lands in the file: code, data image, REL table, params. */
struct layout {
    uint32_t ro; /* LOADADDR(.data): the data image's offset */
    size_t data_len, rel_off, rel_end, img_len, plen, plen8;
};

static int find_parts(const struct elf *e, bool legacy, struct parts *p)
{
    const Elf32_Shdr *bss = section(e, ".bss");
    p->flash = section(e, ".flash");
    p->data = section(e, ".data");
    p->params = section(e, ".params_0");
    p->entries = symbol(e, "_network_entries");
    p->ctx = symbol(e, "_network_rt_ctx");
    p->desc = symbol(e, legacy ? "_mota_weight_binds" : "_params_desc");
    p->legacy = legacy;
    p->seg_ram = legacy ? SEG_LEGACY_RAM : SEG_RAM;
    p->seg_params = legacy ? SEG_WEIGHTS : SEG_PARAMS;
    p->header_words = legacy ? 25 : 24;
    if (p->flash == NULL || p->data == NULL || bss == NULL)
        return tool_fail(MOTA_ERR_ARG, "ELF lacks .flash, .data or .bss: not linked with the model SDK's script?");
    if (p->entries == NULL || p->ctx == NULL || p->desc == NULL)
        return tool_fail(MOTA_ERR_ARG, "model lacks MOTA_MODEL() (_network_entries, _network_rt_ctx, %s)",
                         legacy ? "_mota_weight_binds" : "_params_desc");
    if (p->flash->sh_addr != SEG_FLASH || p->data->sh_addr != p->seg_ram ||
        (p->params && p->params->sh_addr != p->seg_params))
        return tool_fail(MOTA_ERR_ARG, "segments are not at their tag addresses");
    if (p->flash->sh_size < p->header_words * 4 || mota_get32(e->d + p->flash->sh_offset) != MOTA_NBIN_MAGIC)
        return tool_fail(MOTA_ERR_ARG, ".flash does not start with the NBIN header");
    return MOTA_OK;
}

/* One relocation in .flash (in_flash) or .data: an ABS32 word in the RW data for the REL table (legacy:
 * a weights address to bind instead), nothing to do, or a refusal (reported). */
static int take_reloc(const struct elf *e, const struct parts *p, const Elf32_Rel *r, bool in_flash, struct words *relw,
                      struct words *binds)
{
    unsigned type = ELF32_R_TYPE(r->r_info), si = ELF32_R_SYM(r->r_info);
    uint32_t at = r->r_offset;
    uint32_t s_addr = si < e->nsym ? e->sym[si].st_value : 0;
    int ret;
    if (type == RT_NONE || type == RT_V4BX || si == 0)
        return MOTA_OK;
    if (at >= p->entries->st_value && at < p->entries->st_value + p->entries->st_size)
        return MOTA_OK; /* the entry table: the loader uses only the offsets */
    switch (type) {
    case RT_ABS32:
        if (in_flash)
            return tool_fail(MOTA_ERR_ARG,
                             "absolute address (R_ARM_ABS32) in read-only code or data at 0x%08x: "
                             "it cannot be patched in XIP mode (make the object non-const)",
                             at);
        if (p->legacy && (ret = bind_weights(e, p->data, binds, at)) != NOT_WEIGHTS)
            return ret;
        return words_add(relw, at);
    case RT_GOT_BREL:
    case RT_GOT_PREL: return MOTA_OK; /* a GOT slot: relocated by the GOT pass */
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
        if ((s_addr >> 28) != (at >> 28))
            return tool_fail(MOTA_ERR_ARG, "PC-relative %s at 0x%08x reaches another segment (0x%08x)",
                             reloc_name(type), at, s_addr);
        return MOTA_OK;
    default:
        return tool_fail(MOTA_ERR_ARG,
                         "relocation type %u (%s) at 0x%08x cannot be represented in an NBIN model "
                         "(compile with -fpic -msingle-pic-base -mno-pic-data-is-text-relative)",
                         type, reloc_name(type), at);
    }
}

/* Relocations: keep ABS32 in the RW data, refuse what cannot move. */
static int collect_relocs(const struct elf *e, const struct parts *p, struct words *relw, struct words *binds)
{
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
            int ret = take_reloc(e, p, &r[k], in_flash, relw, binds);
            if (ret != MOTA_OK)
                return ret;
        }
    }
    return MOTA_OK;
}

/* Legacy: GOT slots of weights are bound at init too. */
static int bind_got(const struct elf *e, const Elf32_Shdr *data, struct words *binds)
{
    const Elf32_Sym *gs = symbol(e, "__got_start"), *ge = symbol(e, "__got_end");
    if (gs == NULL || ge == NULL || gs->st_value < data->sh_addr || ge->st_value > data->sh_addr + data->sh_size)
        return tool_fail(MOTA_ERR_ARG, "the GOT is not inside .data");
    for (uint32_t at = gs->st_value; at + 4 <= ge->st_value; at += 4) {
        int ret = bind_weights(e, data, binds, at);
        if (ret != MOTA_OK && ret != NOT_WEIGHTS)
            return ret;
    }
    return MOTA_OK;
}

/* ELF order is ascending within .rel.data; make it so regardless */
static void sort_words(uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint32_t t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    }
}

static int plan_layout(const struct elf *e, const struct parts *p, size_t nrel, struct layout *l)
{
    l->ro = mota_get32(e->d + p->flash->sh_offset + 16) & 0x0FFFFFFFu; /* LOADADDR(.data) */
    if (l->ro < p->flash->sh_size || l->ro % (p->legacy ? 4 : 8) != 0)
        return tool_fail(MOTA_ERR_ARG, "data load address 0x%08x is not after the flash section", l->ro);
    /* legacy files have no padding (code, data, REL, weights); NPU ones align each part to 8 */
    l->data_len = p->data->sh_size;
    l->rel_off = p->legacy ? l->ro + l->data_len : round8(l->ro + l->data_len);
    l->rel_end = l->rel_off + 4 * nrel;
    l->img_len = p->legacy ? l->rel_end : round8(l->rel_end);
    l->plen = p->params ? p->params->sh_size : 0;
    l->plen8 = p->legacy ? l->plen : round8(l->plen);
    return MOTA_OK;
}

/* Legacy: every use of the weights fits the runtime's bind table, which, like the runtime context, lies
 * inside its section. */
static int check_binds(const struct parts *p, const struct layout *l, size_t n_binds)
{
    const Elf32_Sym *desc = p->desc, *ctx = p->ctx;
    if (desc->st_size < 4 || n_binds / 2 > (desc->st_size / 4 - 1) / 2)
        return tool_fail(MOTA_ERR_ARG, "%zu uses of weights: more than the runtime's bind table holds (%u)",
                         n_binds / 2, (unsigned)((desc->st_size / 4 - 1) / 2));
    if (desc->st_value < SEG_FLASH || desc->st_value - SEG_FLASH + desc->st_size > p->flash->sh_size ||
        ctx->st_value < p->seg_ram || ctx->st_value - p->seg_ram + 32 > l->data_len)
        return tool_fail(MOTA_ERR_ARG, "bind table or runtime context outside its section");
    return MOTA_OK;
}

/* The file's bytes: code, ST's flash fill, the data image, the REL table, then the params blob (appended,
 * or in b->params when split); the REL table's place in the header. */
static int assemble(const struct elf *e, const struct parts *p, const struct layout *l, const struct words *rel,
                    bool split, struct built *b)
{
    b->image_len = l->img_len + (split ? 0 : l->plen8);
    b->image = calloc(1, b->image_len);
    b->params_len = split ? l->plen8 : 0;
    b->params = split ? calloc(1, l->plen8 ? l->plen8 : 1) : NULL;
    if (b->image == NULL || (split && b->params == NULL))
        return tool_fail(MOTA_ERR_NOSPC, "out of memory");
    memcpy(b->image, e->d + p->flash->sh_offset, p->flash->sh_size);
    memset(b->image + p->flash->sh_size, 0xff, l->ro - p->flash->sh_size); /* ST's flash fill */
    memcpy(b->image + l->ro, e->d + p->data->sh_offset, l->data_len);
    for (size_t i = 0; i < rel->n; i++)
        mota_put32(b->image + l->rel_off + 4 * i, p->seg_ram | (rel->v[i] - p->seg_ram));
    if (l->plen > 0)
        memcpy(split ? b->params : b->image + l->img_len, e->d + p->params->sh_offset, l->plen);
    mota_put32(b->image + 36, SEG_FLASH | (uint32_t)l->rel_off);
    mota_put32(b->image + 40, SEG_FLASH | (uint32_t)l->rel_end);
    return MOTA_OK;
}

/* Legacy: where the appended weights are, their size in the runtime context, and the bind table; no
 * weights address stays in the file. */
static void finish_legacy(const struct parts *p, const struct layout *l, const struct words *binds, bool split,
                          struct built *b)
{
    bool appended = !split && l->plen > 0;
    mota_put32(b->image + 44, appended ? SEG_FLASH | (uint32_t)l->img_len : 0); /* weights_start */
    mota_put32(b->image + 48, appended ? SEG_FLASH | (uint32_t)(l->img_len + l->plen) : 0);
    mota_put32(b->image + l->ro + (p->ctx->st_value - p->seg_ram) + 28, (uint32_t)l->plen); /* rt_ctx.weights_size */
    uint8_t *bt = b->image + (p->desc->st_value - SEG_FLASH);
    mota_put32(bt, (uint32_t)(binds->n / 2));
    for (size_t i = 0; i < binds->n; i++)
        mota_put32(bt + 4 + 4 * i, binds->v[i]);
    for (size_t i = 0; i < binds->n; i += 2)
        mota_put32(b->image + l->ro + binds->v[i],
                   0); /* no weights address in the file: 0 is left alone by the loader */
}

/* NPU: the params blob's offset and CRC-32, then the runtime context and the params pool descriptor,
 * now that the blob is known. */
static int finish_npu(const struct parts *p, const struct layout *l, bool split, struct built *b)
{
    const uint8_t *blob = split ? b->params : b->image + l->img_len;
    uint32_t crc = mota_crc32(0, blob, l->plen8);
    mota_put32(b->image + 48, (split || l->plen == 0) ? 0 : (uint32_t)l->img_len);

    /* runtime context and the params pool descriptor, now that the blob is known */
    uint8_t *rc = b->image + l->ro + (p->ctx->st_value - SEG_RAM);
    uint8_t *dp = b->image + l->ro + (p->desc->st_value - SEG_RAM);
    if (p->ctx->st_value - SEG_RAM + 68 > l->data_len || p->desc->st_value - SEG_RAM + 40 > l->data_len)
        return tool_fail(MOTA_ERR_ARG, "runtime context or descriptors outside .data");
    mota_put32(rc + 28, (uint32_t)l->plen);
    mota_put32(rc + 48, (uint32_t)l->plen8);
    mota_put32(rc + 52, crc);
    if (l->plen > 0) {
        mota_put32(dp + 4, 0x01010100u); /* RELOC, PARAM, READ, pool 0 */
        mota_put32(dp + 8, 0);
        mota_put32(dp + 12, 0);
        mota_put32(dp + 16, (uint32_t)l->plen);
    }
    return MOTA_OK;
}

/* The post-processor proper. */
static int postprocess(const struct elf *e, bool split, bool legacy, struct built *b)
{
    struct parts p;
    struct layout l = {0};
    struct words relw = {0}, binds = {0};
    int ret = find_parts(e, legacy, &p);
    if (ret != MOTA_OK)
        return ret;
    ret = MOTA_ERR_ARG;
    if (collect_relocs(e, &p, &relw, &binds) != MOTA_OK || (legacy && bind_got(e, p.data, &binds) != MOTA_OK))
        goto out;
    sort_words(relw.v, relw.n);
    if (plan_layout(e, &p, relw.n, &l) != MOTA_OK || (legacy && check_binds(&p, &l, binds.n) != MOTA_OK) ||
        assemble(e, &p, &l, &relw, split, b) != MOTA_OK)
        goto out;
    if (legacy) {
        finish_legacy(&p, &l, &binds, split, b);
        ret = MOTA_OK;
    } else if (finish_npu(&p, &l, split, b) == MOTA_OK) {
        ret = MOTA_OK;
    }
out:
    free(relw.v);
    free(binds.v);
    return ret;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

struct build_opts {
    bool answered; /* --help: printed, nothing to build */
    const char *out, *split, *cpu, *opt, *sdk, *cc, *keep;
    const char *user_flags[64]; /* -I and -D, for the compiler */
    int n_user;
    bool secure, verbose, legacy, user_part;
    char **sources;
    int n_sources;
};

static int parse_options(int argc, char **argv, struct build_opts *o)
{
    enum { O_SPLIT = 256, O_CPU, O_SECURE, O_OPT, O_SDK, O_CC, O_KEEP, O_VERBOSE, O_FAMILY };
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"out", required_argument, 0, 'o'},
        {"output", required_argument, 0, 'o'}, {"split", required_argument, 0, O_SPLIT},
        {"cpu", required_argument, 0, O_CPU}, {"secure", no_argument, 0, O_SECURE}, {"opt", required_argument, 0, O_OPT},
        {"sdk", required_argument, 0, O_SDK}, {"cc", required_argument, 0, O_CC}, {"keep", required_argument, 0, O_KEEP},
        {"verbose", no_argument, 0, O_VERBOSE}, {"family", required_argument, 0, O_FAMILY}, {0, 0, 0, 0}};
    /* clang-format on */
    int c;
    *o = (struct build_opts){.cpu = "cortex-m55", .opt = "-Os", .sdk = MOTA_MODEL_SDK_DIR, .cc = "arm-none-eabi-gcc"};
    optind = 1;
    while ((c = tool_getopt(argc, argv, "ho:I:D:", opts, "build-model")) != -1) {
        switch (c) {
        case 'h':
            help(stdout);
            o->answered = true;
            return EXIT_OK;
        case 'o': o->out = optarg; break;
        case O_SPLIT: o->split = optarg; break;
        case O_CPU: o->cpu = optarg; break;
        case O_SECURE: o->secure = true; break;
        case O_OPT: o->opt = optarg; break;
        case O_SDK: o->sdk = optarg; break;
        case O_CC: o->cc = optarg; break;
        case O_KEEP: o->keep = optarg; break;
        case O_VERBOSE: o->verbose = true; break;
        case O_FAMILY:
            if (strcmp(optarg, "legacy") != 0 && strcmp(optarg, "npu") != 0) {
                tool_usage_err("build-model", "--family is npu or legacy, not %s", optarg);
                return EXIT_USAGE;
            }
            o->legacy = strcmp(optarg, "legacy") == 0;
            break;
        case 'I':
        case 'D':
            if (o->n_user + 2 > 64) {
                tool_usage_err("build-model", "too many -I/-D options");
                return EXIT_USAGE;
            }
            o->user_flags[o->n_user++] = c == 'I' ? "-I" : "-D";
            o->user_flags[o->n_user++] = optarg;
            o->user_part |= c == 'D' && strncmp(optarg, "MOTA_MODEL_CPU_PART", 19) == 0;
            break;
        default: return EXIT_USAGE;
        }
    }
    if (o->out == NULL || optind >= argc)
        return tool_usage_err("build-model", "needs -o OUT and at least one source");
    if (argc - optind > 64) {
        tool_usage_err("build-model", "at most 64 sources");
        return EXIT_USAGE;
    }
    o->sources = argv + optind;
    o->n_sources = argc - optind;
    return EXIT_OK;
}

/* A source the compiler cannot take, named before it runs (its own words would name a temporary file):
 * one that cannot be read (exit 3), or not C or assembly by its name (.c, .s, .S: a usage error). */
static int check_sources(const struct build_opts *o)
{
    for (int i = 0; i < o->n_sources; i++) {
        const char *s = o->sources[i], *dot = strrchr(s, '.');
        if (access(s, R_OK) != 0) {
            tool_fail(MOTA_ERR_IO, "%s: %s", s, strerror(errno));
            return EXIT_IO;
        }
        if (dot == NULL || (strcmp(dot, ".c") != 0 && strcmp(dot, ".s") != 0 && strcmp(dot, ".S") != 0))
            return tool_usage_err("build-model", "%s is not a C or assembly source (.c, .s, .S)", s);
    }
    return EXIT_OK;
}

/* an output over a source or over the other output: refused before compiling */
static int check_outputs(const struct build_opts *o)
{
    int rc = check_sources(o);
    if (rc != EXIT_OK)
        return rc;
    for (int i = 0; i < o->n_sources; i++)
        tool_note_input(o->sources[i]);
    if (o->split != NULL && tool_same_file(o->out, o->split)) {
        tool_fail(MOTA_ERR_SAME_FILE, "-o %s and --split %s are the same file", o->out, o->split);
        return EXIT_IO;
    }
    if (tool_out_check(o->out) != MOTA_OK || (o->split != NULL && tool_out_check(o->split) != MOTA_OK))
        return EXIT_IO;
    return EXIT_OK;
}

/* the CPU part number the flags word carries, from -mcpu (SCB CPUID[15:4]); 0 when unknown */
static unsigned cpu_part(const char *cpu)
{
    static const struct {
        const char *cpu;
        unsigned part;
    } parts[] = {{"cortex-m0plus", 0xC60}, {"cortex-m3", 0xC23},  {"cortex-m4", 0xC24}, {"cortex-m7", 0xC27},
                 {"cortex-m33", 0xD21},    {"cortex-m55", 0xD22}, {"cortex-m85", 0xD23}};
    unsigned part = 0;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        size_t n = strlen(parts[i].cpu);
        if (strncmp(cpu, parts[i].cpu, n) == 0 && (cpu[n] == 0 || cpu[n] == '+'))
            part = parts[i].part;
    }
    return part;
}

/* The intermediate files and the flags that name them. */
struct build {
    /* the directory leaves room for the names under it */
    char dir[3072], cpu_flag[128], part_flag[64], sdk_inc[4096], ld[4096], rt[2][4096], elf_path[4096], map_flag[4200];
};

/* The directory of the intermediate files: --keep DIR, or a temporary one (removed at the end). */
static int make_workdir(const char *keep, char *dir, size_t cap)
{
    if (keep != NULL) {
        snprintf(dir, cap, "%s", keep);
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            tool_fail(MOTA_ERR_IO, "%s: %s", dir, strerror(errno));
            return EXIT_IO;
        }
        return EXIT_OK;
    }
    const char *tmp = getenv("TMPDIR");
    if (snprintf(dir, cap, "%s/mota-build-XXXXXX", tmp ? tmp : "/tmp") >= (int)cap) {
        tool_fail(MOTA_ERR_IO, "TMPDIR too long");
        return EXIT_IO;
    }
    if (mkdtemp(dir) == NULL) {
        tool_fail(MOTA_ERR_IO, "temporary directory: %s", strerror(errno));
        return EXIT_IO;
    }
    return EXIT_OK;
}

static void name_files(const struct build_opts *o, struct build *bd)
{
    snprintf(bd->cpu_flag, sizeof(bd->cpu_flag), "-mcpu=%s", o->cpu);
    snprintf(bd->sdk_inc, sizeof(bd->sdk_inc), "-I%s", o->sdk);
    snprintf(bd->ld, sizeof(bd->ld), "-Wl,-T,%s/%s", o->sdk, o->legacy ? "mota_legacy.ld" : "mota_model.ld");
    snprintf(bd->rt[0], sizeof(bd->rt[0]), "%s/mota_model_rt.c", o->sdk);
    snprintf(bd->rt[1], sizeof(bd->rt[1]), "%s/mota_legacy_rt.c", o->sdk);
    snprintf(bd->elf_path, sizeof(bd->elf_path), "%s/model.elf", bd->dir);
    snprintf(bd->map_flag, sizeof(bd->map_flag), "-Wl,-Map,%s/model.map", bd->dir);
}

/* One source compiled into obj. */
static int compile(const struct build_opts *o, const struct build *bd, const char *src, const char *obj)
{
    /* ST's relocatable code model: GOT through r9, no text-relative data. */
    static const char *common[] = {"-mthumb",
                                   "-mfloat-abi=hard",
                                   "-fpic",
                                   "-msingle-pic-base",
                                   "-mpic-register=r9",
                                   "-mno-pic-data-is-text-relative",
                                   "-ffreestanding",
                                   "-fno-builtin",
                                   "-nostdlib",
                                   "-ffunction-sections",
                                   "-fdata-sections",
                                   "-fno-common",
                                   "-fvisibility=hidden",
                                   "-fno-unwind-tables",
                                   "-fno-asynchronous-unwind-tables",
                                   "-std=gnu11",
                                   "-Wall",
                                   "-Werror"};
    struct argv_buf a = {.n = 0};
    arg(&a, o->cc);
    arg(&a, bd->cpu_flag);
    for (size_t k = 0; k < sizeof(common) / sizeof(common[0]); k++)
        arg(&a, common[k]);
    arg(&a, o->opt);
    if (o->secure)
        arg(&a, "-mcmse");
    if (o->legacy)
        arg(&a, "-DMOTA_MODEL_LEGACY");
    if (!o->user_part)
        arg(&a, bd->part_flag);
    arg(&a, bd->sdk_inc);
    for (int k = 0; k < o->n_user; k++)
        arg(&a, o->user_flags[k]);
    arg(&a, "-c");
    arg(&a, src);
    arg(&a, "-o");
    arg(&a, obj);
    return run_cmd(&a, o->verbose);
}

/* The objects linked by the SDK's script into the ELF, its relocations kept for the post-processor. */
static int link_elf(const struct build_opts *o, const struct build *bd, char (*objs)[4096], int n_objs)
{
    struct argv_buf l = {.n = 0};
    arg(&l, o->cc);
    arg(&l, bd->cpu_flag);
    arg(&l, "-mthumb");
    arg(&l, "-mfloat-abi=hard");
    arg(&l, "-nostdlib");
    arg(&l, "-nostartfiles");
    arg(&l, bd->ld);
    arg(&l, "-Wl,--emit-relocs");
    arg(&l, "-Wl,--gc-sections");
    arg(&l, "-Wl,-e,0");
    arg(&l, bd->map_flag);
    arg(&l, "-o");
    arg(&l, bd->elf_path);
    for (int i = 0; i < n_objs; i++)
        arg(&l, objs[i]);
    arg(&l, "-lgcc");
    return run_cmd(&l, o->verbose);
}

/* The sources and the SDK's runtime (the legacy family's too) compiled, then linked. */
static int build_elf(const struct build_opts *o, const struct build *bd)
{
    static char objs[MAX_ARGS][4096];
    int n_rt = o->legacy ? 2 : 1, n_objs = 0;
    for (int i = 0; i < o->n_sources + n_rt; i++) {
        const char *src = i < o->n_sources ? o->sources[i] : bd->rt[i - o->n_sources];
        snprintf(objs[n_objs], sizeof(objs[0]), "%s/obj%d.o", bd->dir, i);
        int ret = compile(o, bd, src, objs[n_objs++]);
        if (ret != MOTA_OK)
            return ret;
    }
    return link_elf(o, bd, objs, n_objs);
}

/* The built model checked as a device checks it: the header, and the params against it. */
static int check_built(const struct built *b, bool split, struct mota_nbin_info *info)
{
    int ret = mota_nbin_validate(b->image, b->image_len, info);
    if (ret == MOTA_OK)
        ret = mota_nbin_check_params(info, split ? b->params : b->image, split ? b->params_len : b->image_len);
    if (ret != MOTA_OK)
        tool_fail(ret, "the built model does not validate (a builder bug or an unsupported construct)");
    return ret;
}

/* One output file, written atomically. */
static int write_output(const char *path, const uint8_t *p, size_t n)
{
    struct outfile o;
    if (tool_out_open(&o, path, 0644) != MOTA_OK)
        return MOTA_ERR_IO;
    if (tool_out_write(&o, p, n) != MOTA_OK || tool_out_commit(&o) != MOTA_OK) {
        tool_out_abort(&o);
        return MOTA_ERR_IO;
    }
    return MOTA_OK;
}

int cmd_build_model(int argc, char **argv)
{
    struct build_opts o;
    struct build bd = {.dir = ""};
    struct built b = {0};
    struct mapped m = {0};
    struct elf e;
    struct mota_nbin_info info;
    int rc = parse_options(argc, argv, &o), ret;
    if (rc != EXIT_OK || o.answered)
        return rc;
    if ((rc = check_outputs(&o)) != EXIT_OK)
        return rc;
    unsigned part = cpu_part(o.cpu);
    if (part == 0 && !o.user_part) {
        tool_usage_err("build-model", "no CPU part number known for --cpu %s: pass -D MOTA_MODEL_CPU_PART=0x...",
                       o.cpu);
        return EXIT_USAGE;
    }
    snprintf(bd.part_flag, sizeof(bd.part_flag), "-DMOTA_MODEL_CPU_PART=0x%03Xu", part);
    if ((o.keep != NULL && strlen(o.keep) >= sizeof(bd.dir)) || strlen(o.sdk) >= 2048) {
        tool_usage_err("build-model", "path too long");
        return EXIT_USAGE;
    }
    if (make_workdir(o.keep, bd.dir, sizeof(bd.dir)) != EXIT_OK)
        return EXIT_IO;
    name_files(&o, &bd);
    rc = EXIT_IO;
    if ((ret = build_elf(&o, &bd)) != MOTA_OK) {
        rc = ret == MOTA_ERR_BUILD ? EXIT_INVALID : EXIT_IO;
        goto done;
    }
    if (tool_map(bd.elf_path, &m) != MOTA_OK)
        goto done;
    rc = EXIT_INVALID;
    if (elf_open(m.data, m.len, &e) != MOTA_OK || postprocess(&e, o.split != NULL, o.legacy, &b) != MOTA_OK ||
        check_built(&b, o.split != NULL, &info) != MOTA_OK)
        goto done;
    rc = EXIT_IO;
    if (write_output(o.out, b.image, b.image_len) != MOTA_OK ||
        (o.split != NULL && write_output(o.split, b.params, b.params_len) != MOTA_OK))
        goto done;
    printf("wrote %s: %zu bytes (RO %u, RW %u, GOT %u, REL %u, %s %u%s), exec RAM XIP %u / COPY %u\n", o.out,
           b.image_len, info.ro_size, info.rw_size, (info.got_end - info.got_off) / 4, info.rel_count,
           o.legacy ? "weights" : "params", info.params_len, o.split ? " split" : "", info.exec_ram_xip,
           info.exec_ram_copy);
    rc = EXIT_OK;
done:
    tool_unmap(&m);
    free(b.image);
    free(b.params);
    if (o.keep == NULL && bd.dir[0] != '\0')
        nftw(bd.dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    return rc;
}
