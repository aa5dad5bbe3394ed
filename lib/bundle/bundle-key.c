/* The one rule every HMAC key is read under (bundle.h): the gate's key
 * that signs, and verify's that checks, each bundle and a gate's set
 * record.  A file of its own because both the set (bundle-set.c) and the
 * single bundle's verifier (bundle-verify.c) read keys, and the set frees
 * the verifier's reports: with the rule in either, the two called each
 * other. */
#include "config.h"

#include "bundle/bundle.h"

gboolean
airlock_bundle_key_check (GBytes *key, const char *what, GError **error)
{
  gsize len = g_bytes_get_size (key);

  /* Below 16 bytes an HMAC key can be guessed; the same bound for signing
   * and checking, so verify never accepts a key the gate would refuse. */
  if (len < AIRLOCK_BUNDLE_KEY_MIN || len > AIRLOCK_BUNDLE_KEY_MAX)
    {
      g_set_error (error, AIRLOCK_BUNDLE_ERROR, AIRLOCK_BUNDLE_ERROR_KEY,
                   "%s holds %" G_GSIZE_FORMAT " bytes: an HMAC key is %d bytes to %d KiB",
                   what, len, AIRLOCK_BUNDLE_KEY_MIN, AIRLOCK_BUNDLE_KEY_MAX / 1024);
      return FALSE;
    }
  return TRUE;
}

GBytes *
airlock_bundle_key_load (const char *path, GError **error)
{
  g_autofree char *contents = NULL;
  g_autofree char *what = g_strdup_printf ("the key file '%s'", path);
  g_autoptr (GBytes) key = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &contents, &len, error))
    return NULL;
  /* Its bytes as they are: a key is a secret, not a text to trim. */
  key = g_bytes_new_take (g_steal_pointer (&contents), len);
  if (!airlock_bundle_key_check (key, what, error))
    return NULL;
  return g_steal_pointer (&key);
}
