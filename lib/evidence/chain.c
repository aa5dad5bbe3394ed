/* The evidence hash chain (see chain-private.h). */
#include "config.h"

#include "chain-private.h"

#include <openssl/sha.h>
#include <string.h>

/* g_checksum_update() takes a gssize: feed anything larger in pieces
 * rather than let a length turn negative. */
static void
checksum_update_all (GChecksum *checksum, const guint8 *data, gsize len)
{
  while (len > 0)
    {
      gsize piece = MIN (len, (gsize) G_MAXSSIZE);

      g_checksum_update (checksum, data, (gssize) piece);
      data += piece;
      len -= piece;
    }
}

static void
chain_digest (GChecksum *checksum, AirlockChain *chain)
{
  gsize digest_len = sizeof chain->value;

  g_checksum_get_digest (checksum, chain->value, &digest_len);
  g_assert (digest_len == sizeof chain->value);
}

void
airlock_chain_init (AirlockChain *chain, const guint8 *host_hello, gsize len)
{
  g_autoptr (GChecksum) checksum = NULL;

  g_return_if_fail (chain != NULL);
  g_return_if_fail (host_hello != NULL || len == 0);

  checksum = g_checksum_new (G_CHECKSUM_SHA256);
  checksum_update_all (checksum, (const guint8 *) AIRLOCK_CHAIN_SEED,
                       strlen (AIRLOCK_CHAIN_SEED));
  checksum_update_all (checksum, host_hello, len);
  chain_digest (checksum, chain);
}

/* Frames are at most a header and AIRLOCK_FRAME_MAX_PAYLOAD bytes: the
 * chain value and one frame fit on the stack. */
#define CHAIN_INPUT_MAX (AIRLOCK_CHAIN_SIZE + 16 + 16384)

void
airlock_chain_append (AirlockChain *chain, const guint8 *frame, gsize len)
{
  guint8 input[CHAIN_INPUT_MAX];

  g_return_if_fail (chain != NULL);
  g_return_if_fail (frame != NULL || len == 0);

  /* libcrypto's SHA-256 uses the CPU's SHA extensions: the chain is the
   * host's largest cost per byte of evidence (bench/ingest), GLib's
   * portable SHA-256 runs at a fifth of the speed.  Same function, same
   * values. */
  if (len <= CHAIN_INPUT_MAX - AIRLOCK_CHAIN_SIZE)
    {
      memcpy (input, chain->value, AIRLOCK_CHAIN_SIZE);
      if (len)
        memcpy (input + AIRLOCK_CHAIN_SIZE, frame, len);
      SHA256 (input, AIRLOCK_CHAIN_SIZE + len, chain->value);
      return;
    }
  {
    g_autoptr (GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);

    checksum_update_all (checksum, chain->value, sizeof chain->value);
    checksum_update_all (checksum, frame, len);
    chain_digest (checksum, chain);
  }
}
