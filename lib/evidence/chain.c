/* The evidence hash chain (see chain-private.h). */
#include "config.h"

#include "chain-private.h"

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

void
airlock_chain_append (AirlockChain *chain, const guint8 *frame, gsize len)
{
  g_autoptr (GChecksum) checksum = NULL;

  g_return_if_fail (chain != NULL);
  g_return_if_fail (frame != NULL || len == 0);

  checksum = g_checksum_new (G_CHECKSUM_SHA256);
  checksum_update_all (checksum, chain->value, sizeof chain->value);
  checksum_update_all (checksum, frame, len);
  chain_digest (checksum, chain);
}
