/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The USART behind the ST-LINK's virtual COM port (board_config.h: which one, its pins, its clock) as the
 * update link's struct mota_transport: 115,200 baud 8N1, received bytes moved by the RX interrupt into a
 * ring that holds more than the link's whole window (docs/porting.md "The transport"), transmit polled.
 * An overrun (a byte lost while the CPU could not take the interrupt: on a single-bank F4 while the flash
 * erases, nothing runs from it) is counted and cleared; the link's CRC and flow control recover.
 * The F4's USART (SR, DR) and the U5's (ISR, RDR, TDR, ICR) differ in their registers only.
 */
#include "stm32.h"

#include "mota/err.h"

#define USART MOTA_STM32_USART

#if MOTA_STM32_SERIES_F4
#define RX_READY() (USART->SR & USART_SR_RXNE)
#define OVERRUN() (USART->SR & USART_SR_ORE)
#define RX_BYTE() ((uint8_t)USART->DR) /* reading DR after SR also clears ORE */
/* the byte in DR when ORE rose is good, and RXNE is set with it: the drain's read takes it and clears ORE */
#define CLEAR_OVERRUN() ((void)0)
#define TX_READY() (USART->SR & USART_SR_TXE)
#define TX_BYTE(b) (USART->DR = (b))
#define CR1_ON (USART_CR1_UE | USART_CR1_TE | USART_CR1_RE | USART_CR1_RXNEIE)
#else
#define RX_READY() (USART->ISR & USART_ISR_RXNE_RXFNE)
#define OVERRUN() (USART->ISR & USART_ISR_ORE)
#define RX_BYTE() ((uint8_t)USART->RDR)
#define CLEAR_OVERRUN() (USART->ICR = USART_ICR_ORECF)
#define TX_READY() (USART->ISR & USART_ISR_TXE_TXFNF)
#define TX_BYTE(b) (USART->TDR = (b))
#define CR1_ON (USART_CR1_UE | USART_CR1_TE | USART_CR1_RE | USART_CR1_RXNEIE_RXFNEIE)
#endif

#ifndef MOTA_STM32_RX_RING
#define MOTA_STM32_RX_RING 4096u /* a power of two, > the link window (sizes.cmake) */
#endif

_Static_assert((MOTA_STM32_RX_RING & (MOTA_STM32_RX_RING - 1u)) == 0, "the RX ring is a power of two");
static uint8_t ring[MOTA_STM32_RX_RING];
static void drain(struct mota_arm_rx *rx);
static struct mota_arm_rx rx = {.buf = ring, .size = MOTA_STM32_RX_RING, .drain = drain};

/* Move received bytes into the ring (the RX interrupt, and the reader with interrupts masked). */
static void drain(struct mota_arm_rx *r)
{
    if (OVERRUN()) {
        r->overruns++;
        CLEAR_OVERRUN();
    }
    while (RX_READY())
        mota_arm_rx_put(r, RX_BYTE());
}

void stm32_usart_irq(void)
{
    drain(&rx);
}

static int usart_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    (void)ctx;
    return mota_arm_rx_read(&rx, buf, len, timeout_ms);
}

/* Polled transmit, bounded: a fault before the USART is set up (its clock off, TXE never set) or a stuck
 * line loses the text, never the board. */
void stm32_usart_put(const char *s, size_t n)
{
    if (!(USART->CR1 & USART_CR1_UE))
        return;
    for (size_t i = 0; i < n; i++) {
        uint32_t tries = 100000u; /* a byte takes 87 us at 115,200 baud: milliseconds at any clock */
        while (!TX_READY() && --tries != 0)
            ;
        if (tries == 0)
            return;
        TX_BYTE((uint8_t)s[i]);
    }
}

static int usart_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    stm32_usart_put((const char *)buf, len);
    return MOTA_OK;
}

/* A pin to its alternate function (the USART's), fast, with a pull-up (an idle RX line reads 1). */
static void pin_af(GPIO_TypeDef *g, uint32_t pin, uint32_t af)
{
    g->MODER = (g->MODER & ~(3u << (2u * pin))) | 2u << (2u * pin);
    g->OSPEEDR |= 2u << (2u * pin);
    g->PUPDR = (g->PUPDR & ~(3u << (2u * pin))) | 1u << (2u * pin);
    g->AFR[pin / 8u] = (g->AFR[pin / 8u] & ~(0xFu << (4u * (pin % 8u)))) | af << (4u * (pin % 8u));
}

void stm32_usart_init(struct mota_transport *t)
{
    MOTA_STM32_USART_CLOCKS_ON();
    (void)MOTA_STM32_USART_CLOCKS_READBACK; /* the clock reaches the peripheral before its first access */
    pin_af(MOTA_STM32_USART_GPIO, MOTA_STM32_USART_TX_PIN, MOTA_STM32_USART_AF);
    pin_af(MOTA_STM32_USART_GPIO, MOTA_STM32_USART_RX_PIN, MOTA_STM32_USART_AF);
    USART->CR1 = 0;
    USART->BRR = (MOTA_STM32_USART_CLOCK_HZ + MOTA_STM32_BAUD / 2u) / MOTA_STM32_BAUD; /* oversampling by 16 */
    USART->CR1 = CR1_ON;
    NVIC_SetPriority(MOTA_STM32_USART_IRQn, 0);
    NVIC_EnableIRQ(MOTA_STM32_USART_IRQn);
    t->read = usart_read;
    t->write = usart_write;
    t->ctx = NULL;
}
