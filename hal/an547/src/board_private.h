/* Shared between the an547 port's files; not part of its API. */
#ifndef MOTA_AN547_PRIVATE_H
#define MOTA_AN547_PRIVATE_H

#include "mota/an547.h"
#include "semihost.h"

#include <stdbool.h>
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_ICSR REG(0xE000ED04u)
#define SCB_AIRCR REG(0xE000ED0Cu)
#define SCB_CPACR REG(0xE000ED88u)
#define NVIC_ISER(n) REG(0xE000E100u + 4u * (n))

/* arguments from the launcher (semihosting command line) */
struct an547_args {
    const char *flash;
    uint32_t flash_len;
    enum mota_reset_cause cause;
    uint32_t fault_pc, fault_addr, fault_cfsr;
    uint64_t cut_at_op;
    int torn;
    int hang_on_trial;
    int measure_stack;
};
extern struct an547_args an547_args;

int an547_args_parse(void);
int an547_flash_init(struct mota_flash *f);
int an547_uart_init(struct mota_transport *t);
void an547_clock_init(void);
uint64_t an547_now_us(void *ctx);
uint64_t an547_ticks(void);
uint32_t an547_watchdog_period_ms(void); /* 0: not running */
void an547_system_init(struct mota_system *s);
/* the last words before a reset: the launcher reads them as the reset cause */
void an547_reset_announce(const char *cause, uint32_t pc, uint32_t addr, uint32_t cfsr);
/* guarded model calls (guard.c) */
struct an547_guard_call {
    uint32_t fn, r9, a0, a1, a2;           /* entry (Thumb bit kept), RW base, arguments */
    uint32_t code_base, code_end;          /* its flash slot: code and params, read-only */
    uint32_t ram_base, ram_end;            /* its exec RAM: RW data, activations */
    bool ram_exec;                         /* COPY mode: its code runs from that RAM */
    uint32_t io_base, io_end;              /* input then output */
    uint64_t budget_us;                    /* stopped past this */
};
enum { AN547_FAULT_SVC = 1, AN547_FAULT_TIMEOUT = 2 }; /* else the exception number (3 HardFault .. 7) */
struct an547_guard_fault {
    uint32_t kind, pc, addr, cfsr;
};
int an547_guard_call(const struct an547_guard_call *c, uint32_t *ret, struct an547_guard_fault *fault);
uint32_t an547_guard_stack_size(void);
void an547_svc_handler(void);

/* exception handlers (startup.c's vector table) */
void an547_systick_handler(void);
void an547_nmi_handler(void);
void an547_uart0_rx_handler(void);

#endif
