/* The evidence hash chain.
 *
 *   h0      = SHA-256 ("airlock-chain-v1" || host hello, 48 bytes || run spec)
 *   h(n+1)  = SHA-256 (h(n) || frame n, header and payload as received)
 *
 * The run spec is the spec_length bytes the host sends after its hello
 * (empty for the boot check, so h0 is then the hello's alone).
 *
 * Seeding with the host hello binds the chain to this run's nonce, so a
 * chain (or a bundle) from another run cannot be passed off as this one;
 * chaining each value into the next means no accepted frame can be changed,
 * dropped or reordered without changing the head.  `airlock verify`
 * recomputes it from the raw stream. */
#pragma once

#include "airlock-macros.h"

G_BEGIN_DECLS

#define AIRLOCK_CHAIN_SEED "airlock-chain-v1"
#define AIRLOCK_CHAIN_SIZE 32

typedef struct {
  guint8 value[AIRLOCK_CHAIN_SIZE];
} AirlockChain;

/* Sets @chain to h0 for @host_hello: the host hello followed by the run
 * spec, if any (@len bytes together). */
void airlock_chain_init (AirlockChain *chain, const guint8 *host_hello, gsize len);
/* Advances @chain over one frame (@len bytes, header and payload). */
void airlock_chain_append (AirlockChain *chain, const guint8 *frame, gsize len);

G_END_DECLS
