/* Digests, descriptors and platforms (descriptor-private.h): the words an
 * index, a manifest and manifest.json use to name what they hold, checked
 * here once for every reader of them.  A member of the wrong type reads as
 * absent (the toolbox's readers), so it fails as a missing one does. */
#include "config.h"

#include "image/descriptor-private.h"
#include "image/printable-private.h"
#include "json-util-private.h"

#include <string.h>

void
airlock_image_descriptor_clear (AirlockImageDescriptor *d)
{
  g_clear_pointer (&d->digest, g_free);
  g_clear_pointer (&d->hex, g_free);
}

gboolean
airlock_image_is_sha256_hex (const char *hex)
{
  if (strlen (hex) != 64)
    return FALSE;
  for (const char *p = hex; *p; p++)
    if (!g_ascii_isdigit (*p) && !(*p >= 'a' && *p <= 'f'))
      return FALSE;
  return TRUE;
}

char *
airlock_image_parse_digest (const char *digest, const char *what, GError **error)
{
  const char *colon = digest ? strchr (digest, ':') : NULL;
  g_autofree char *algorithm = NULL;
  /* The digest as the image wrote it, before it is checked. */
  g_autofree char *shown = NULL;

  if (!colon || colon == digest || !colon[1])
    {
      shown = airlock_image_printable (digest);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: digest '%s' is not ALGORITHM:HEX", what, shown);
      return NULL;
    }
  algorithm = g_strndup (digest, colon - digest);
  if (!g_str_equal (algorithm, "sha256"))
    {
      g_autofree char *shown_algorithm = airlock_image_printable (algorithm);

      shown = airlock_image_printable (digest);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                   "%s: digest '%s' uses '%s': only sha256 is taken", what, shown,
                   shown_algorithm);
      return NULL;
    }
  if (!airlock_image_is_sha256_hex (colon + 1))
    {
      shown = airlock_image_printable (digest);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: digest '%s' is not 64 lowercase hex digits", what, shown);
      return NULL;
    }
  return g_strdup (colon + 1);
}

gboolean
airlock_image_parse_descriptor (JsonNode *node, const char *what, AirlockImageDescriptor *ret,
                                GError **error)
{
  JsonObject *object = node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  gint64 size;

  if (!object)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a descriptor (a JSON object)", what);
      return FALSE;
    }
  ret->media_type = airlock_json_get_string (object, "mediaType");
  if (!ret->media_type)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: the descriptor has no mediaType", what);
      return FALSE;
    }
  if (!airlock_json_get_int (object, "size", &size) || size < 0)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: the descriptor has no size (a non-negative integer)", what);
      return FALSE;
    }
  ret->size = size;
  ret->hex = airlock_image_parse_digest (airlock_json_get_string (object, "digest"), what, error);
  if (!ret->hex)
    return FALSE;
  ret->digest = g_strconcat ("sha256:", ret->hex, NULL);
  return TRUE;
}

char *
airlock_image_platform_string (const char *os, const char *architecture, const char *variant)
{
  g_autofree char *shown_os = airlock_image_printable (os);
  g_autofree char *shown_architecture = airlock_image_printable (architecture);
  g_autofree char *shown_variant = variant && *variant ? airlock_image_printable (variant) : NULL;

  return shown_variant
           ? g_strdup_printf ("%s/%s/%s", shown_os, shown_architecture, shown_variant)
           : g_strdup_printf ("%s/%s", shown_os, shown_architecture);
}

gboolean
airlock_image_platform_is_arch (const char *os, const char *architecture, const char *variant,
                                AirlockArch *ret)
{
  gboolean no_variant = !variant || !*variant;

  if (g_strcmp0 (os, "linux") != 0)
    return FALSE;
  if (g_strcmp0 (architecture, "amd64") == 0 && (no_variant || g_str_equal (variant, "v1")))
    *ret = AIRLOCK_ARCH_AMD64;
  else if (g_strcmp0 (architecture, "arm64") == 0 && (no_variant || g_str_equal (variant, "v8")))
    *ret = AIRLOCK_ARCH_ARM64;
  else
    return FALSE;
  return TRUE;
}
