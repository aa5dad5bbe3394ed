/* Reading the image's JSON (json-blob-private.h): every document bounded
 * before it is read, a blob hashed before it is parsed, and json-glib
 * handed only what passed the nesting-depth check. */
#include "config.h"

#include "image/json-blob-private.h"
#include "image/printable-private.h"
#include "json-bounded-private.h"

/* Bounds on what an image may ask of us: the bytes of one JSON document. */
#define MAX_JSON_BLOB (4 * 1024 * 1024)

JsonNode *
airlock_image_parse_json (const char *data, gsize length, const char *what, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (JsonNode) root = airlock_json_parse_bounded (data, length, NULL, &local);

  if (!root)
    {
      /* json-glib quotes the token it did not expect, and a string token
       * is the image's bytes as they are (control characters included):
       * shown printable and cut, after @what whole. */
      g_autofree char *reason = airlock_image_printable (local->message);

      g_set_error (error, AIRLOCK_IMAGE_ERROR,
                   local->code == AIRLOCK_JSON_ERROR_TOO_DEEP ? AIRLOCK_IMAGE_ERROR_LIMIT
                                                              : AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: %s", what, reason);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root) && !JSON_NODE_HOLDS_ARRAY (root))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a JSON object", what);
      return NULL;
    }
  return g_steal_pointer (&root);
}

GBytes *
airlock_image_read_bounded (AirlockImageSource *source, const char *path, const char *what,
                            GError **error)
{
  g_autoptr (GInputStream) stream = NULL;
  g_autoptr (GError) local = NULL;
  g_autofree guint8 *data = NULL;
  guint64 size;
  gsize n;

  stream = airlock_blob_store_open (source->store, path, &size, &local);
  if (!stream)
    {
      g_set_error (error, local->domain, local->code, "%s: %s", what, local->message);
      return NULL;
    }
  if (size > MAX_JSON_BLOB)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: %" G_GUINT64_FORMAT " bytes, more than the %d a JSON document may have",
                   what, size, MAX_JSON_BLOB);
      return NULL;
    }
  data = g_malloc (size + 1);
  if (!g_input_stream_read_all (stream, data, size + 1, &n, NULL, &local))
    {
      g_set_error (error, local->domain, local->code, "%s: %s", what, local->message);
      return NULL;
    }
  if (n != size)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: %" G_GSIZE_FORMAT " bytes were read, the file has %" G_GUINT64_FORMAT
                   " (it changed while it was read)", what, n, size);
      return NULL;
    }
  return g_bytes_new_take (g_steal_pointer (&data), n);
}

JsonNode *
airlock_image_read_json_blob (AirlockImageSource *source, const AirlockImageDescriptor *d,
                              const char *path, const char *context, const char *whose,
                              GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: blob %s (%s)", source->reference, d->digest, context);
  g_autofree char *actual = NULL;
  g_autoptr (GBytes) bytes = NULL;
  g_autofree char *blob_path = path ? g_strdup (path) : g_strconcat ("blobs/sha256/", d->hex, NULL);
  guint64 stored;
  g_autoptr (GError) local = NULL;

  if (d->size > MAX_JSON_BLOB)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: %s says it has %" G_GUINT64_FORMAT " bytes, more than the %d a JSON blob "
                   "may have",
                   what, whose, d->size, MAX_JSON_BLOB);
      return NULL;
    }
  if (!airlock_blob_store_size (source->store, blob_path, &stored, &local))
    {
      g_set_error (error, local->domain, local->code, "%s: missing (%s)", what, local->message);
      return NULL;
    }
  if (stored != d->size)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: %" G_GUINT64_FORMAT " bytes, %s says %" G_GUINT64_FORMAT, what, stored,
                   whose, d->size);
      return NULL;
    }
  bytes = airlock_image_read_bounded (source, blob_path, what, error);
  if (!bytes)
    return NULL;
  actual = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
  if (!g_str_equal (actual, d->hex))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: the bytes hash to sha256:%s", what, actual);
      return NULL;
    }
  return airlock_image_parse_json (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), what,
                                   error);
}

JsonNode *
airlock_image_read_top_json (AirlockImageSource *source, const char *path, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: %s", source->reference, path);
  g_autoptr (GBytes) bytes = airlock_image_read_bounded (source, path, what, error);

  if (!bytes)
    return NULL;
  return airlock_image_parse_json (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), what,
                                   error);
}
