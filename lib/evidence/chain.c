/* The evidence hash chain (see chain-private.h). */
#include "config.h"

#include "chain-private.h"

#include <openssl/evp.h>
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

/* libcrypto's SHA-256 uses the CPU's SHA extensions: the chain is the
 * host's largest cost per byte of evidence (bench/ingest), GLib's portable
 * SHA-256 runs at a fifth of the speed.  Same function, same values.
 *
 * The one-shot SHA256() looks the algorithm up in libcrypto's provider
 * store on every call (a lock and reference counting per frame, more than
 * hashing a small frame costs), so the algorithm is fetched once per
 * process and each thread keeps one digest context, reset for every
 * frame. */
static const EVP_MD *
chain_md (void)
{
  static gsize md = 0;

  if (g_once_init_enter (&md))
    {
      EVP_MD *fetched = EVP_MD_fetch (NULL, "SHA256", NULL);

      if (fetched == NULL)
        g_error ("cannot fetch SHA-256 from libcrypto for the evidence chain");
      g_once_init_leave (&md, (gsize) fetched);
    }
  return (const EVP_MD *) md;
}

static GPrivate chain_ctx = G_PRIVATE_INIT ((GDestroyNotify) EVP_MD_CTX_free);

static EVP_MD_CTX *
chain_thread_ctx (void)
{
  EVP_MD_CTX *ctx = g_private_get (&chain_ctx);

  if (ctx == NULL)
    {
      ctx = EVP_MD_CTX_new ();
      if (ctx == NULL)
        g_error ("cannot allocate a libcrypto digest context for the evidence chain");
      g_private_set (&chain_ctx, ctx);
    }
  return ctx;
}

void
airlock_chain_append (AirlockChain *chain, const guint8 *frame, gsize len)
{
  EVP_MD_CTX *ctx;
  unsigned int digest_len = 0;

  g_return_if_fail (chain != NULL);
  g_return_if_fail (frame != NULL || len == 0);

  ctx = chain_thread_ctx ();
  /* A chain value that silently failed to advance would be worse than no
   * chain: any failure of libcrypto here ends the process. */
  if (!EVP_DigestInit_ex2 (ctx, chain_md (), NULL)
      || !EVP_DigestUpdate (ctx, chain->value, sizeof chain->value)
      || (len > 0 && !EVP_DigestUpdate (ctx, frame, len))
      || !EVP_DigestFinal_ex (ctx, chain->value, &digest_len))
    g_error ("libcrypto's SHA-256 failed while chaining evidence");
  g_assert (digest_len == sizeof chain->value);
}
