/* OCI image intake: references, index → per-arch manifest → config and
 * layers, every JSON blob verified against its digest and size before it
 * is parsed.
 *
 * The image is untrusted input.  Each JSON blob is bounded before it is
 * read, hashed before it is parsed, and only then believed; the layer list
 * is bounded before it is walked; only media types we know are taken, so a
 * new kind of blob is a clear error rather than a guess. */
#include "config.h"

#include "image/blob-private.h"
#include "image/layer-stream-private.h"
#include "image/printable-private.h"
#include "image/remote-private.h"
#include "json-bounded-private.h"

#include <json-glib/json-glib.h>
#include <string.h>

/* Bounds on what an image may ask of us. */
#define MAX_JSON_BLOB (4 * 1024 * 1024)
#define MAX_LAYERS 1000
#define MAX_INDEX_ENTRIES 1000
#define MAX_INDEX_DEPTH 4

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define MT_DOCKER_LAYER_TAR "application/vnd.docker.image.rootfs.diff.tar"
#define REF_NAME_ANNOTATION "org.opencontainers.image.ref.name"

typedef enum {
  SOURCE_OCI_DIR,
  SOURCE_OCI_ARCHIVE,
  SOURCE_DOCKER_ARCHIVE,
} SourceKind;

/* One manifest an arch could resolve to. */
typedef struct {
  JsonNode *descriptor;       /* the index entry (OCI); NULL for docker-archive */
  char *index_digest;         /* the index blob it was listed in, or NULL */
  char *where;                /* "index.json", "index sha256:…": for messages */
  gboolean platform_known;
  char *os, *architecture, *variant;
  gboolean platform_from_index;
} ManifestChoice;

struct _AirlockImageSource {
  char *reference;
  SourceKind kind;
  char *tag;
  AirlockBlobStore *store;
  GPtrArray *choices;         /* ManifestChoice * */
  guint entries_seen;         /* index entries visited, over the whole tree */
  GHashTable *layer_context;  /* digest → "layer 2 of linux/arm64", for messages */
  /* docker-archive: the one image of manifest.json */
  JsonNode *docker_config;
  char *docker_config_digest;
  guint64 docker_config_size;
  char *docker_manifest_digest;
  GPtrArray *docker_layers;   /* AirlockImageLayer * */
  GHashTable *layer_paths;    /* digest → path in the archive */
};

typedef struct {
  char *digest;
  char *hex;
  const char *media_type;     /* borrowed from the JSON */
  guint64 size;
} Descriptor;

static void
descriptor_clear (Descriptor *d)
{
  g_clear_pointer (&d->digest, g_free);
  g_clear_pointer (&d->hex, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Descriptor, descriptor_clear)

static void
manifest_choice_free (gpointer data)
{
  ManifestChoice *c = data;

  g_clear_pointer (&c->descriptor, json_node_unref);
  g_free (c->index_digest);
  g_free (c->where);
  g_free (c->os);
  g_free (c->architecture);
  g_free (c->variant);
  g_free (c);
}

static void
image_layer_free (gpointer data)
{
  AirlockImageLayer *layer = data;

  g_free (layer->digest);
  g_free (layer->media_type);
  g_free (layer);
}

/* ---- small JSON helpers ------------------------------------------------- */

/* A string member, or NULL when absent, null or not a string. */
static const char *
member_string (JsonObject *object, const char *name)
{
  JsonNode *node = object ? json_object_get_member (object, name) : NULL;

  if (!node || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static JsonObject *
member_object (JsonObject *object, const char *name)
{
  JsonNode *node = object ? json_object_get_member (object, name) : NULL;

  return node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static JsonArray *
member_array (JsonObject *object, const char *name)
{
  JsonNode *node = object ? json_object_get_member (object, name) : NULL;

  return node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static gboolean
member_integer (JsonObject *object, const char *name, gint64 *ret_value)
{
  JsonNode *node = object ? json_object_get_member (object, name) : NULL;

  if (!node || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *ret_value = json_node_get_int (node);
  return TRUE;
}

/* A config string list (Entrypoint, Cmd, Env): absent or null → NULL;
 * anything but an array of strings → FALSE. */
static gboolean
member_strv (JsonObject *object, const char *name, GStrv *ret_strv)
{
  JsonNode *node = object ? json_object_get_member (object, name) : NULL;
  g_autoptr (GStrvBuilder) builder = g_strv_builder_new ();
  JsonArray *array;

  *ret_strv = NULL;
  if (!node || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return FALSE;
  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *e = json_array_get_element (array, i);
      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        return FALSE;
      g_strv_builder_add (builder, json_node_get_string (e));
    }
  *ret_strv = g_strv_builder_end (builder);
  return TRUE;
}

static gboolean
is_sha256_hex (const char *hex)
{
  if (strlen (hex) != 64)
    return FALSE;
  for (const char *p = hex; *p; p++)
    if (!g_ascii_isdigit (*p) && !(*p >= 'a' && *p <= 'f'))
      return FALSE;
  return TRUE;
}

/* "sha256:<64 lowercase hex>" → the hex.  Another algorithm with the
 * grammar of the spec is UNSUPPORTED; anything else MALFORMED.  @what
 * prefixes the message. */
static char *
parse_digest (const char *digest, const char *what, GError **error)
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
  if (!is_sha256_hex (colon + 1))
    {
      shown = airlock_image_printable (digest);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: digest '%s' is not 64 lowercase hex digits", what, shown);
      return NULL;
    }
  return g_strdup (colon + 1);
}

/* A descriptor: mediaType, digest and size, all required. */
static gboolean
parse_descriptor (JsonNode *node, const char *what, Descriptor *ret, GError **error)
{
  JsonObject *object = node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  gint64 size;

  if (!object)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a descriptor (a JSON object)", what);
      return FALSE;
    }
  ret->media_type = member_string (object, "mediaType");
  if (!ret->media_type)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: the descriptor has no mediaType", what);
      return FALSE;
    }
  if (!member_integer (object, "size", &size) || size < 0)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: the descriptor has no size (a non-negative integer)", what);
      return FALSE;
    }
  ret->size = size;
  ret->hex = parse_digest (member_string (object, "digest"), what, error);
  if (!ret->hex)
    return FALSE;
  ret->digest = g_strconcat ("sha256:", ret->hex, NULL);
  return TRUE;
}

static gboolean
is_index_type (const char *media_type)
{
  return g_strcmp0 (media_type, MT_OCI_INDEX) == 0 || g_strcmp0 (media_type, MT_DOCKER_LIST) == 0;
}

static gboolean
is_manifest_type (const char *media_type)
{
  return g_strcmp0 (media_type, MT_OCI_MANIFEST) == 0 ||
         g_strcmp0 (media_type, MT_DOCKER_MANIFEST) == 0;
}

static gboolean
layer_compression (const char *media_type, AirlockLayerCompression *ret)
{
  static const struct {
    const char *media_type;
    AirlockLayerCompression compression;
  } known[] = {
    { "application/vnd.oci.image.layer.v1.tar", AIRLOCK_LAYER_PLAIN },
    { "application/vnd.oci.image.layer.v1.tar+gzip", AIRLOCK_LAYER_GZIP },
    { "application/vnd.oci.image.layer.v1.tar+zstd", AIRLOCK_LAYER_ZSTD },
    { "application/vnd.oci.image.layer.nondistributable.v1.tar", AIRLOCK_LAYER_PLAIN },
    { "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", AIRLOCK_LAYER_GZIP },
    { "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", AIRLOCK_LAYER_ZSTD },
    { "application/vnd.docker.image.rootfs.diff.tar.gzip", AIRLOCK_LAYER_GZIP },
    { "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", AIRLOCK_LAYER_GZIP },
    { MT_DOCKER_LAYER_TAR, AIRLOCK_LAYER_PLAIN },
  };

  for (guint i = 0; i < G_N_ELEMENTS (known); i++)
    if (g_str_equal (media_type, known[i].media_type))
      {
        *ret = known[i].compression;
        return TRUE;
      }
  return FALSE;
}

/* "linux/arm64/v8", for messages and listings: the fields come from the
 * index or the config, so each is escaped (a platform airlock runs is
 * plain ASCII and shows as it is). */
static char *
platform_string (const char *os, const char *architecture, const char *variant)
{
  g_autofree char *shown_os = airlock_image_printable (os);
  g_autofree char *shown_architecture = airlock_image_printable (architecture);
  g_autofree char *shown_variant = variant && *variant ? airlock_image_printable (variant) : NULL;

  return shown_variant
           ? g_strdup_printf ("%s/%s/%s", shown_os, shown_architecture, shown_variant)
           : g_strdup_printf ("%s/%s", shown_os, shown_architecture);
}

/* linux/amd64; linux/arm64 with no variant or v8. */
static gboolean
platform_is_arch (const char *os, const char *architecture, const char *variant, AirlockArch *ret)
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

static char *
arch_platform (AirlockArch arch)
{
  return g_strdup_printf ("linux/%s", airlock_arch_to_string (arch));
}

/* ---- reading JSON ------------------------------------------------------- */

static JsonNode *
parse_json (const char *data, gsize length, const char *what, GError **error)
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

/* Reads @path of the store, at most MAX_JSON_BLOB bytes; sets @ret_size. */
static GBytes *
read_bounded (AirlockImageSource *source, const char *path, const char *what, GError **error)
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

/* A content-addressed JSON blob: bounded, size and digest checked, then
 * parsed.  @whose names what declared it ("the manifest", "index.json"). */
static JsonNode *
read_json_blob (AirlockImageSource *source, const Descriptor *d, const char *path,
                const char *context, const char *whose, GError **error)
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
  bytes = read_bounded (source, blob_path, what, error);
  if (!bytes)
    return NULL;
  actual = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
  if (!g_str_equal (actual, d->hex))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: the bytes hash to sha256:%s", what, actual);
      return NULL;
    }
  return parse_json (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), what, error);
}

/* index.json / manifest.json: not content-addressed, only bounded. */
static JsonNode *
read_top_json (AirlockImageSource *source, const char *path, GError **error)
{
  g_autofree char *what = g_strdup_printf ("%s: %s", source->reference, path);
  g_autoptr (GBytes) bytes = read_bounded (source, path, what, error);

  if (!bytes)
    return NULL;
  return parse_json (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), what, error);
}

/* ---- OCI: index → choices ---------------------------------------------- */

static gboolean
check_index (JsonObject *index, const char *what, GError **error)
{
  gint64 version = 0;
  const char *media_type = member_string (index, "mediaType");
  JsonArray *manifests = member_array (index, "manifests");

  if (!member_integer (index, "schemaVersion", &version) || version != 2)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                   "%s: schemaVersion is not 2", what);
      return FALSE;
    }
  if (media_type && !is_index_type (media_type))
    {
      g_autofree char *shown = airlock_image_printable (media_type);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                   "%s: media type '%s' is not an image index", what, shown);
      return FALSE;
    }
  if (!manifests)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: no 'manifests' list", what);
      return FALSE;
    }
  if (json_array_get_length (manifests) > MAX_INDEX_ENTRIES)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: %u manifests, more than the %d allowed", what,
                   json_array_get_length (manifests), MAX_INDEX_ENTRIES);
      return FALSE;
    }
  return TRUE;
}

static gboolean
collect_choices (AirlockImageSource *source, GPtrArray *entries, const char *index_digest,
                 const char *where, guint depth, GError **error)
{
  for (guint i = 0; i < entries->len; i++)
    {
      JsonNode *node = entries->pdata[i];
      JsonObject *entry = json_node_get_object (node);
      g_auto (Descriptor) d = { NULL };
      g_autofree char *what = g_strdup_printf ("%s: %s, entry %u", source->reference, where, i + 1);
      JsonObject *platform = member_object (entry, "platform");

      /* The bound is on the whole tree, not on each index: 1000 entries
       * that all name one nested index of 1000 entries, four deep, are
       * 10^12 visits of a few KB of JSON — a hang, never an answer. */
      if (++source->entries_seen > MAX_INDEX_ENTRIES)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                       "%s: the index and the indexes it nests hold more than %d entries in all",
                       what, MAX_INDEX_ENTRIES);
          return FALSE;
        }
      if (!parse_descriptor (node, what, &d, error))
        return FALSE;
      /* Build attestations (buildx) describe an image, they are not one. */
      if (member_string (member_object (entry, "annotations"), "vnd.docker.reference.type"))
        continue;
      if (is_index_type (d.media_type))
        {
          g_autoptr (JsonNode) nested = NULL;
          g_autoptr (GPtrArray) nested_entries = g_ptr_array_new ();
          g_autofree char *nested_where = g_strdup_printf ("index %s", d.digest);
          g_autofree char *blob_what = g_strdup_printf ("%s: blob %s (index)", source->reference,
                                                        d.digest);
          JsonArray *manifests;

          if (depth == MAX_INDEX_DEPTH)
            {
              g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                           "%s: indexes nested more than %d deep", blob_what, MAX_INDEX_DEPTH);
              return FALSE;
            }
          nested = read_json_blob (source, &d, NULL, "index", where, error);
          if (!nested || !check_index (json_node_get_object (nested), blob_what, error))
            return FALSE;
          manifests = member_array (json_node_get_object (nested), "manifests");
          for (guint j = 0; j < json_array_get_length (manifests); j++)
            {
              JsonNode *e = json_array_get_element (manifests, j);
              if (!JSON_NODE_HOLDS_OBJECT (e))
                {
                  g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                               "%s: entry %u is not a descriptor", blob_what, j + 1);
                  return FALSE;
                }
              g_ptr_array_add (nested_entries, e);
            }
          if (!collect_choices (source, nested_entries, d.digest, nested_where, depth + 1, error))
            return FALSE;
        }
      else
        {
          ManifestChoice *choice = g_new0 (ManifestChoice, 1);

          choice->descriptor = json_node_ref (node);
          choice->index_digest = g_strdup (index_digest);
          choice->where = g_strdup (where);
          if (platform && member_string (platform, "os") && member_string (platform, "architecture"))
            {
              choice->platform_known = choice->platform_from_index = TRUE;
              choice->os = g_strdup (member_string (platform, "os"));
              choice->architecture = g_strdup (member_string (platform, "architecture"));
              choice->variant = g_strdup (member_string (platform, "variant"));
            }
          g_ptr_array_add (source->choices, choice);
        }
    }
  return TRUE;
}

static char *
tags_of (JsonArray *manifests)
{
  g_autoptr (GString) tags = g_string_new (NULL);

  for (guint i = 0; i < json_array_get_length (manifests); i++)
    {
      JsonNode *e = json_array_get_element (manifests, i);
      const char *tag = JSON_NODE_HOLDS_OBJECT (e)
                          ? member_string (member_object (json_node_get_object (e), "annotations"),
                                           REF_NAME_ANNOTATION)
                          : NULL;
      if (tag)
        {
          g_autofree char *shown = airlock_image_printable (tag);
          g_string_append_printf (tags, "%s'%s'", tags->len ? ", " : "", shown);
        }
    }
  if (!tags->len)
    g_string_append (tags, "none");
  airlock_image_printable_list_bound (tags);
  return g_string_free (g_steal_pointer (&tags), FALSE);
}

static gboolean
open_oci (AirlockImageSource *source, GError **error)
{
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (GPtrArray) entries = g_ptr_array_new ();
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree char *what = g_strdup_printf ("%s: index.json", source->reference);
  JsonArray *manifests;

  if (!airlock_blob_store_has (source->store, "index.json"))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "%s: not an OCI image layout: there is no index.json", source->reference);
      return FALSE;
    }
  root = read_top_json (source, "index.json", error);
  if (!root)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a JSON object", what);
      return FALSE;
    }
  if (!check_index (json_node_get_object (root), what, error))
    return FALSE;
  manifests = member_array (json_node_get_object (root), "manifests");

  for (guint i = 0; i < json_array_get_length (manifests); i++)
    {
      JsonNode *e = json_array_get_element (manifests, i);
      const char *tag;

      if (!JSON_NODE_HOLDS_OBJECT (e))
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "%s: entry %u is not a descriptor", what, i + 1);
          return FALSE;
        }
      tag = member_string (member_object (json_node_get_object (e), "annotations"),
                           REF_NAME_ANNOTATION);
      if (source->tag && g_strcmp0 (tag, source->tag) != 0)
        continue;
      g_hash_table_add (names, (gpointer) (tag ? tag : ""));
      g_ptr_array_add (entries, e);
    }
  if (entries->len == 0)
    {
      g_autofree char *tags = tags_of (manifests);
      if (source->tag)
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                     "%s: no manifest is tagged '%s' (tags: %s)", what, source->tag, tags);
      else
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                     "%s: the index lists no manifest", what);
      return FALSE;
    }
  /* Several tags are several images: which one is meant must be said. */
  if (g_hash_table_size (names) > 1)
    {
      g_autofree char *tags = tags_of (manifests);
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                   "%s: it holds several images (tags: %s): name one as %s:TAG", what, tags,
                   source->reference);
      return FALSE;
    }
  return collect_choices (source, entries, NULL, "index.json", 0, error);
}

/* ---- OCI: manifest and config ------------------------------------------ */

typedef struct {
  JsonNode *manifest;
  JsonNode *config;
  char *config_digest;
} LoadedManifest;

static void
loaded_manifest_clear (LoadedManifest *m)
{
  g_clear_pointer (&m->manifest, json_node_unref);
  g_clear_pointer (&m->config, json_node_unref);
  g_clear_pointer (&m->config_digest, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (LoadedManifest, loaded_manifest_clear)

static gboolean
load_manifest (AirlockImageSource *source, ManifestChoice *choice, const char *label,
               LoadedManifest *ret, GError **error)
{
  g_auto (Descriptor) d = { NULL };
  g_auto (Descriptor) config = { NULL };
  g_autofree char *entry_what = g_strdup_printf ("%s: %s", source->reference, choice->where);
  g_autofree char *manifest_context = g_strdup_printf ("manifest of %s", label);
  g_autofree char *config_context = g_strdup_printf ("config of %s", label);
  g_autofree char *what = NULL;
  g_autofree char *whose = NULL;
  JsonObject *manifest;
  const char *media_type;
  gint64 version = 0;

  if (!parse_descriptor (choice->descriptor, entry_what, &d, error))
    return FALSE;
  what = g_strdup_printf ("%s: blob %s (%s)", source->reference, d.digest, manifest_context);
  if (!is_manifest_type (d.media_type))
    {
      g_autofree char *shown = airlock_image_printable (d.media_type);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                   "%s: media type '%s' is not an image manifest this version takes", what,
                   shown);
      return FALSE;
    }
  whose = g_strdup (choice->where);
  ret->manifest = read_json_blob (source, &d, NULL, manifest_context, whose, error);
  if (!ret->manifest)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (ret->manifest))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a JSON object", what);
      return FALSE;
    }
  manifest = json_node_get_object (ret->manifest);
  media_type = member_string (manifest, "mediaType");
  if (!member_integer (manifest, "schemaVersion", &version) || version != 2)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                   "%s: schemaVersion is not 2", what);
      return FALSE;
    }
  /* The descriptor and the blob must agree on what the blob is. */
  if (media_type && !g_str_equal (media_type, d.media_type))
    {
      /* The descriptor's type is one is_manifest_type() took. */
      g_autofree char *shown = airlock_image_printable (media_type);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: its media type is '%s', %s says '%s'", what, shown, whose,
                   d.media_type);
      return FALSE;
    }
  if (!parse_descriptor (json_object_get_member (manifest, "config"), what, &config, error))
    return FALSE;
  if (!g_str_equal (config.media_type, MT_OCI_CONFIG) &&
      !g_str_equal (config.media_type, MT_DOCKER_CONFIG))
    {
      g_autofree char *shown = airlock_image_printable (config.media_type);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                   "%s: config media type '%s' is not an image config (an artifact?)", what,
                   shown);
      return FALSE;
    }
  ret->config = read_json_blob (source, &config, NULL, config_context, "the manifest", error);
  if (!ret->config)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (ret->config))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: blob %s (%s): not a JSON object", source->reference, config.digest,
                   config_context);
      return FALSE;
    }
  ret->config_digest = g_steal_pointer (&config.digest);
  return TRUE;
}

/* Learns an index entry's platform from its config when the index does
 * not say it. */
static gboolean
ensure_platform (AirlockImageSource *source, ManifestChoice *choice, GError **error)
{
  g_auto (LoadedManifest) loaded = { NULL };
  JsonObject *config;

  if (choice->platform_known)
    return TRUE;
  if (!load_manifest (source, choice, "an entry without a platform", &loaded, error))
    return FALSE;
  config = json_node_get_object (loaded.config);
  /* Checked before anything is stored: a choice whose platform stays
   * unknown is loaded again by the next list or resolve, and storing the
   * strings of a config that names an os but no architecture leaked them
   * on every retry (found by tests/fuzz/fuzz-intake, seed
   * corpus/intake/oci-config-no-arch). */
  if (!member_string (config, "os") || !member_string (config, "architecture"))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: blob %s (config): no os or architecture", source->reference,
                   loaded.config_digest);
      return FALSE;
    }
  choice->os = g_strdup (member_string (config, "os"));
  choice->architecture = g_strdup (member_string (config, "architecture"));
  choice->variant = g_strdup (member_string (config, "variant"));
  choice->platform_known = TRUE;
  return TRUE;
}

/* ---- docker-archive ------------------------------------------------------ */

/* What a registry would hold for this image: a Docker v2 manifest naming
 * the config and the layers as stored.  The archive has none, and the disk
 * cache and the verdict need one digest for the image. */
static char *
docker_synthetic_manifest_digest (AirlockImageSource *source)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *text = NULL;
  g_autofree char *hex = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "schemaVersion");
  json_builder_add_int_value (builder, 2);
  json_builder_set_member_name (builder, "mediaType");
  json_builder_add_string_value (builder, MT_DOCKER_MANIFEST);
  json_builder_set_member_name (builder, "config");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "mediaType");
  json_builder_add_string_value (builder, MT_DOCKER_CONFIG);
  json_builder_set_member_name (builder, "size");
  json_builder_add_int_value (builder, source->docker_config_size);
  json_builder_set_member_name (builder, "digest");
  json_builder_add_string_value (builder, source->docker_config_digest);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "layers");
  json_builder_begin_array (builder);
  for (guint i = 0; i < source->docker_layers->len; i++)
    {
      AirlockImageLayer *layer = source->docker_layers->pdata[i];
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "mediaType");
      json_builder_add_string_value (builder, layer->media_type);
      json_builder_set_member_name (builder, "size");
      json_builder_add_int_value (builder, layer->size);
      json_builder_set_member_name (builder, "digest");
      json_builder_add_string_value (builder, layer->digest);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  text = json_generator_to_data (generator, NULL);
  hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
  return g_strconcat ("sha256:", hex, NULL);
}

static char *
repo_tags_of (JsonObject *image)
{
  JsonArray *tags = member_array (image, "RepoTags");
  g_autoptr (GString) s = g_string_new (NULL);

  for (guint i = 0; tags && i < json_array_get_length (tags); i++)
    {
      JsonNode *e = json_array_get_element (tags, i);
      if (JSON_NODE_HOLDS_VALUE (e) && json_node_get_value_type (e) == G_TYPE_STRING)
        {
          g_autofree char *shown = airlock_image_printable (json_node_get_string (e));
          g_string_append_printf (s, "%s%s", s->len ? " " : "", shown);
        }
    }
  airlock_image_printable_list_bound (s);
  return g_string_free (g_steal_pointer (&s), FALSE);
}

static JsonObject *
docker_select_image (AirlockImageSource *source, JsonArray *images, GError **error)
{
  guint n = json_array_get_length (images);
  g_autofree char *what = g_strdup_printf ("%s: manifest.json", source->reference);
  g_autoptr (GString) all = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    {
      JsonNode *e = json_array_get_element (images, i);
      g_autofree char *tags = NULL;
      if (!JSON_NODE_HOLDS_OBJECT (e))
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "%s: entry %u is not an object", what, i + 1);
          return NULL;
        }
      tags = repo_tags_of (json_node_get_object (e));
      g_string_append_printf (all, "%s@%u%s%s", all->len ? ", " : "", i, *tags ? " " : "", tags);
    }
  airlock_image_printable_list_bound (all);
  if (!source->tag)
    {
      if (n == 1)
        return json_array_get_object_element (images, 0);
      if (n)
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                     "%s: it holds %u images (%s): name one as docker-archive:FILE:NAME:TAG "
                     "or docker-archive:FILE:@N", what, n, all->str);
      else
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                     "%s: it lists no image", what);
      return NULL;
    }
  if (source->tag[0] == '@')
    {
      guint64 index;
      if (g_ascii_string_to_unsigned (source->tag + 1, 10, 0, G_MAXUINT, &index, NULL) &&
          index < n)
        return json_array_get_object_element (images, index);
    }
  else
    for (guint i = 0; i < n; i++)
      {
        JsonArray *tags = member_array (json_array_get_object_element (images, i), "RepoTags");
        for (guint j = 0; tags && j < json_array_get_length (tags); j++)
          {
            JsonNode *e = json_array_get_element (tags, j);
            if (JSON_NODE_HOLDS_VALUE (e) && json_node_get_value_type (e) == G_TYPE_STRING &&
                g_str_equal (json_node_get_string (e), source->tag))
              return json_array_get_object_element (images, i);
          }
      }
  g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
               "%s: no image is '%s' (it holds %s)", what, source->tag, all->str);
  return NULL;
}

static gboolean
open_docker (AirlockImageSource *source, GError **error)
{
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *what = g_strdup_printf ("%s: manifest.json", source->reference);
  g_autofree char *config_name = NULL;
  g_autofree char *shown_config_path = NULL;
  g_autofree char *config_what = NULL;
  g_autofree char *platform = NULL;
  g_autofree char *actual = NULL;
  g_autoptr (GBytes) config_bytes = NULL;
  JsonObject *image, *config;
  JsonArray *layers, *diff_ids;
  const char *config_path;
  ManifestChoice *choice;
  guint n_layers;

  if (!airlock_blob_store_has (source->store, "manifest.json"))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "%s: not a docker-save archive: there is no manifest.json", source->reference);
      return FALSE;
    }
  root = read_top_json (source, "manifest.json", error);
  if (!root)
    return FALSE;
  if (!JSON_NODE_HOLDS_ARRAY (root))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a JSON array", what);
      return FALSE;
    }
  image = docker_select_image (source, json_node_get_array (root), error);
  if (!image)
    return FALSE;
  config_path = member_string (image, "Config");
  layers = member_array (image, "Layers");
  if (!config_path || !layers)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: the image has no Config or no Layers", what);
      return FALSE;
    }

  /* The config is named by its digest ("<hex>.json", "blobs/sha256/<hex>"):
   * that name is the image ID, and the only digest the archive carries. */
  config_name = g_path_get_basename (config_path);
  if (g_str_has_suffix (config_name, ".json"))
    config_name[strlen (config_name) - 5] = '\0';
  shown_config_path = airlock_image_printable (config_path);
  if (!is_sha256_hex (config_name))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: config file name '%s' does not carry its sha256", what, shown_config_path);
      return FALSE;
    }
  source->docker_config_digest = g_strconcat ("sha256:", config_name, NULL);
  config_what = g_strdup_printf ("%s: blob %s (config '%s')", source->reference,
                                 source->docker_config_digest, shown_config_path);
  config_bytes = read_bounded (source, config_path, config_what, error);
  if (!config_bytes)
    return FALSE;
  actual = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, config_bytes);
  if (!g_str_equal (actual, config_name))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: the bytes hash to sha256:%s", config_what, actual);
      return FALSE;
    }
  source->docker_config_size = g_bytes_get_size (config_bytes);
  source->docker_config = parse_json (g_bytes_get_data (config_bytes, NULL),
                                      g_bytes_get_size (config_bytes), config_what, error);
  if (!source->docker_config)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (source->docker_config))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a JSON object", config_what);
      return FALSE;
    }
  config = json_node_get_object (source->docker_config);

  choice = g_new0 (ManifestChoice, 1);
  choice->where = g_strdup ("manifest.json");
  choice->os = g_strdup (member_string (config, "os"));
  choice->architecture = g_strdup (member_string (config, "architecture"));
  choice->variant = g_strdup (member_string (config, "variant"));
  choice->platform_known = choice->os && choice->architecture;
  g_ptr_array_add (source->choices, choice);
  if (!choice->platform_known)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: no os or architecture", config_what);
      return FALSE;
    }
  platform = platform_string (choice->os, choice->architecture, choice->variant);

  /* Layers are named by path; their digests are the config's diff_ids
   * (docker save stores them uncompressed), so the config's digest binds
   * every byte of the image. */
  n_layers = json_array_get_length (layers);
  if (n_layers > MAX_LAYERS)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: %u layers, more than the %d allowed", what, n_layers, MAX_LAYERS);
      return FALSE;
    }
  diff_ids = member_array (member_object (config, "rootfs"), "diff_ids");
  if (!diff_ids || json_array_get_length (diff_ids) != n_layers)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: rootfs.diff_ids lists %u layers, manifest.json %u", config_what,
                   diff_ids ? json_array_get_length (diff_ids) : 0, n_layers);
      return FALSE;
    }
  for (guint i = 0; i < n_layers; i++)
    {
      JsonNode *path_node = json_array_get_element (layers, i);
      JsonNode *id_node = json_array_get_element (diff_ids, i);
      const char *path = JSON_NODE_HOLDS_VALUE (path_node) &&
                             json_node_get_value_type (path_node) == G_TYPE_STRING
                           ? json_node_get_string (path_node) : NULL;
      const char *diff_id = JSON_NODE_HOLDS_VALUE (id_node) &&
                                json_node_get_value_type (id_node) == G_TYPE_STRING
                              ? json_node_get_string (id_node) : NULL;
      g_autofree char *context = g_strdup_printf ("layer %u of %s", i + 1, platform);
      /* Both as manifest.json and the config wrote them: the diff_id is
       * checked only below. */
      g_autofree char *shown_diff_id = airlock_image_printable (diff_id);
      g_autofree char *shown_path = airlock_image_printable (path);
      g_autofree char *layer_what = g_strdup_printf ("%s: blob %s (%s, '%s')", source->reference,
                                                     shown_diff_id, context, shown_path);
      g_autofree char *hex = parse_digest (diff_id, layer_what, error);
      g_autoptr (GError) local = NULL;
      AirlockImageLayer *layer;
      guint64 size;

      if (!hex)
        return FALSE;
      if (!path)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "%s: manifest.json names no file", layer_what);
          return FALSE;
        }
      if (!airlock_blob_store_size (source->store, path, &size, &local))
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                       "%s: missing (%s)", layer_what, local->message);
          return FALSE;
        }
      layer = g_new0 (AirlockImageLayer, 1);
      layer->digest = g_strdup (diff_id);
      layer->size = size;
      layer->media_type = g_strdup (MT_DOCKER_LAYER_TAR);
      layer->compression = AIRLOCK_LAYER_PLAIN;
      g_ptr_array_add (source->docker_layers, layer);
      g_hash_table_insert (source->layer_paths, g_strdup (diff_id), g_strdup (path));
      g_hash_table_insert (source->layer_context, g_strdup (diff_id),
                           g_strdup_printf ("%s, '%s'", context, shown_path));
    }
  source->docker_manifest_digest = docker_synthetic_manifest_digest (source);
  return TRUE;
}

/* ---- the public API ----------------------------------------------------- */

AirlockImageSource *
airlock_image_source_open (const char *reference, GError **error)
{
  return airlock_image_source_open_cached (reference, NULL, error);
}

AirlockImageSource *
airlock_image_source_open_cached (const char *reference, const char *cache_dir, GError **error)
{
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (GError) local = NULL;
  const char *colon = strchr (reference, ':');
  g_autofree char *transport = colon ? g_strndup (reference, colon - reference) : NULL;
  g_auto (GStrv) parts = NULL;

  g_return_val_if_fail (reference != NULL, NULL);

  source = g_new0 (AirlockImageSource, 1);
  source->reference = g_strdup (reference);
  source->choices = g_ptr_array_new_with_free_func (manifest_choice_free);
  source->layer_context = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  source->layer_paths = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  source->docker_layers = g_ptr_array_new_with_free_func (image_layer_free);

  if (airlock_image_reference_is_remote (reference))
    {
      /* Copied into the cache by skopeo, then read as any OCI layout:
       * every blob checked against its digest.  The reference stays the
       * one given, for messages and for what a bundle records. */
      g_autofree char *dir = airlock_image_fetch_remote (reference, cache_dir, error);

      if (!dir)
        return NULL;
      source->kind = SOURCE_OCI_DIR;
      source->store = airlock_blob_store_new_dir (dir, &local);
      if (!source->store)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, local->code, "%s: %s", reference, local->message);
          return NULL;
        }
      if (!open_oci (source, error))
        return NULL;
      return g_steal_pointer (&source);
    }
  if (g_strcmp0 (transport, "oci") == 0)
    source->kind = SOURCE_OCI_DIR;
  else if (g_strcmp0 (transport, "oci-archive") == 0)
    source->kind = SOURCE_OCI_ARCHIVE;
  else if (g_strcmp0 (transport, "docker-archive") == 0)
    source->kind = SOURCE_DOCKER_ARCHIVE;
  else
    {
      g_autofree char *suggestion = airlock_image_suggest_transport (reference);

      if (suggestion)
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                     "image reference '%s' names no transport: give it as %s", reference,
                     suggestion);
      else
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                     "image reference '%s' does not start with oci:, oci-archive:, docker-archive:, "
                     "docker:// or containers-storage:", reference);
      return NULL;
    }
  /* skopeo's syntax: the path ends at the next ':'. */
  parts = g_strsplit (colon + 1, ":", 2);
  if (!parts[0] || !*parts[0])
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                   "image reference '%s' names no path", reference);
      return NULL;
    }
  if (parts[1])
    {
      if (!*parts[1])
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                       "image reference '%s' has an empty tag", reference);
          return NULL;
        }
      source->tag = g_strdup (parts[1]);
    }

  source->store = source->kind == SOURCE_OCI_DIR
                    ? airlock_blob_store_new_dir (parts[0], &local)
                    : airlock_blob_store_new_archive (parts[0], &local);
  if (!source->store)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, local->code, "%s: %s", reference, local->message);
      return NULL;
    }
  if (!(source->kind == SOURCE_DOCKER_ARCHIVE ? open_docker (source, error)
                                              : open_oci (source, error)))
    return NULL;
  return g_steal_pointer (&source);
}

void
airlock_image_source_free (AirlockImageSource *source)
{
  if (!source)
    return;
  g_free (source->reference);
  g_free (source->tag);
  airlock_blob_store_free (source->store);
  g_clear_pointer (&source->choices, g_ptr_array_unref);
  g_clear_pointer (&source->layer_context, g_hash_table_unref);
  g_clear_pointer (&source->layer_paths, g_hash_table_unref);
  g_clear_pointer (&source->docker_config, json_node_unref);
  g_free (source->docker_config_digest);
  g_free (source->docker_manifest_digest);
  g_clear_pointer (&source->docker_layers, g_ptr_array_unref);
  g_free (source);
}

const char *
airlock_image_source_get_reference (AirlockImageSource *source)
{
  return source->reference;
}

GArray *
airlock_image_source_list_arches (AirlockImageSource *source, GPtrArray **ret_others,
                                  GError **error)
{
  g_autoptr (GArray) arches = g_array_new (FALSE, FALSE, sizeof (AirlockArch));
  g_autoptr (GPtrArray) others = g_ptr_array_new_with_free_func (g_free);
  gboolean seen[AIRLOCK_N_ARCHES] = { FALSE };

  for (guint i = 0; i < source->choices->len; i++)
    {
      ManifestChoice *choice = source->choices->pdata[i];
      AirlockArch arch;

      if (!ensure_platform (source, choice, error))
        return NULL;
      if (platform_is_arch (choice->os, choice->architecture, choice->variant, &arch))
        {
          if (!seen[arch])
            g_array_append_val (arches, arch);
          seen[arch] = TRUE;
        }
      else
        {
          g_autofree char *p = platform_string (choice->os, choice->architecture, choice->variant);
          if (!g_ptr_array_find_with_equal_func (others, p, g_str_equal, NULL))
            g_ptr_array_add (others, g_steal_pointer (&p));
        }
    }
  if (ret_others)
    *ret_others = g_steal_pointer (&others);
  return g_steal_pointer (&arches);
}

static gboolean
take_config (AirlockImageSource *source, JsonObject *config, const char *what,
             AirlockImage *image, GError **error)
{
  JsonObject *run = member_object (config, "config");
  const char *working_dir = member_string (run, "WorkingDir");
  const char *user = member_string (run, "User");

  if (!member_strv (run, "Entrypoint", &image->entrypoint) ||
      !member_strv (run, "Cmd", &image->cmd) || !member_strv (run, "Env", &image->env))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: Entrypoint, Cmd or Env is not a list of strings", what);
      return FALSE;
    }
  /* Empty means unset, as in docker. */
  image->working_dir = working_dir && *working_dir ? g_strdup (working_dir) : NULL;
  image->user = user && *user ? g_strdup (user) : NULL;
  return TRUE;
}

static AirlockImage *
image_new (AirlockImageSource *source, AirlockArch arch, ManifestChoice *choice)
{
  AirlockImage *image = g_new0 (AirlockImage, 1);

  image->reference = g_strdup (source->reference);
  image->arch = arch;
  image->platform = platform_string (choice->os, choice->architecture, choice->variant);
  image->index_digest = g_strdup (choice->index_digest);
  image->layers = g_ptr_array_new_with_free_func (image_layer_free);
  return image;
}

static AirlockImage *
resolve_docker (AirlockImageSource *source, AirlockArch arch, ManifestChoice *choice,
                GError **error)
{
  g_autoptr (AirlockImage) image = image_new (source, arch, choice);
  g_autofree char *what = g_strdup_printf ("%s: blob %s (config)", source->reference,
                                           source->docker_config_digest);

  image->manifest_digest = g_strdup (source->docker_manifest_digest);
  image->config_digest = g_strdup (source->docker_config_digest);
  for (guint i = 0; i < source->docker_layers->len; i++)
    {
      AirlockImageLayer *from = source->docker_layers->pdata[i];
      AirlockImageLayer *layer = g_new0 (AirlockImageLayer, 1);

      layer->digest = g_strdup (from->digest);
      layer->size = from->size;
      layer->media_type = g_strdup (from->media_type);
      layer->compression = from->compression;
      g_ptr_array_add (image->layers, layer);
    }
  if (!take_config (source, json_node_get_object (source->docker_config), what, image, error))
    return NULL;
  return g_steal_pointer (&image);
}

AirlockImage *
airlock_image_resolve (AirlockImageSource *source, AirlockArch arch, GError **error)
{
  g_autofree char *label = arch_platform (arch);
  g_auto (LoadedManifest) loaded = { NULL };
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (GString) has = g_string_new (NULL);
  g_autofree char *manifest_what = NULL;
  g_autofree char *config_what = NULL;
  g_auto (Descriptor) manifest_d = { NULL };
  ManifestChoice *choice = NULL;
  JsonObject *manifest, *config;
  JsonArray *layers, *diff_ids;
  const char *config_os, *config_arch, *config_variant;
  AirlockArch config_is;
  guint n_layers;

  for (guint i = 0; i < source->choices->len && !choice; i++)
    {
      ManifestChoice *c = source->choices->pdata[i];
      AirlockArch a;
      g_autofree char *p = NULL;

      if (!ensure_platform (source, c, error))
        return NULL;
      if (platform_is_arch (c->os, c->architecture, c->variant, &a) && a == arch)
        choice = c;
      p = platform_string (c->os, c->architecture, c->variant);
      g_string_append_printf (has, "%s%s", has->len ? ", " : "", p);
    }
  airlock_image_printable_list_bound (has);
  if (!choice)
    {
      ManifestChoice *first = source->choices->len ? source->choices->pdata[0] : NULL;
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NO_ARCH,
                   "%s: %s has no manifest for %s (it has %s)", source->reference,
                   first ? first->where : "the image", label, has->len ? has->str : "none");
      return NULL;
    }
  if (source->kind == SOURCE_DOCKER_ARCHIVE)
    return resolve_docker (source, arch, choice, error);

  if (!load_manifest (source, choice, label, &loaded, error))
    return NULL;
  (void) parse_descriptor (choice->descriptor, "", &manifest_d, NULL);
  image = image_new (source, arch, choice);
  image->manifest_digest = g_strdup (manifest_d.digest);
  image->config_digest = g_strdup (loaded.config_digest);
  manifest_what = g_strdup_printf ("%s: blob %s (manifest of %s)", source->reference,
                                   manifest_d.digest, label);
  config_what = g_strdup_printf ("%s: blob %s (config of %s)", source->reference,
                                 loaded.config_digest, label);
  manifest = json_node_get_object (loaded.manifest);
  config = json_node_get_object (loaded.config);

  /* The config has the last word on the platform; an index that says
   * otherwise is lying about what it lists. */
  config_os = member_string (config, "os");
  config_arch = member_string (config, "architecture");
  config_variant = member_string (config, "variant");
  if (!platform_is_arch (config_os, config_arch, config_variant, &config_is) || config_is != arch)
    {
      g_autofree char *p = platform_string (config_os ? config_os : "?",
                                            config_arch ? config_arch : "?", config_variant);
      if (choice->platform_from_index)
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                     "%s: the config is for %s, %s lists it as %s", config_what, p, choice->where,
                     image->platform);
      else
        g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NO_ARCH,
                     "%s: the image is for %s, not %s", config_what, p, label);
      return NULL;
    }
  if (!choice->platform_from_index)
    {
      g_free (image->platform);
      image->platform = platform_string (config_os, config_arch, config_variant);
    }

  layers = member_array (manifest, "layers");
  if (!layers)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: no 'layers' list", manifest_what);
      return NULL;
    }
  n_layers = json_array_get_length (layers);
  if (n_layers > MAX_LAYERS)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                   "%s: %u layers, more than the %d allowed", manifest_what, n_layers, MAX_LAYERS);
      return NULL;
    }
  diff_ids = member_array (member_object (config, "rootfs"), "diff_ids");
  if (!diff_ids || json_array_get_length (diff_ids) != n_layers)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: rootfs.diff_ids lists %u layers, the manifest %u", config_what,
                   diff_ids ? json_array_get_length (diff_ids) : 0, n_layers);
      return NULL;
    }
  for (guint i = 0; i < n_layers; i++)
    {
      g_auto (Descriptor) d = { NULL };
      g_autofree char *what = g_strdup_printf ("%s, layer %u", manifest_what, i + 1);
      AirlockImageLayer *layer;
      AirlockLayerCompression compression;

      if (!parse_descriptor (json_array_get_element (layers, i), what, &d, error))
        return NULL;
      if (!layer_compression (d.media_type, &compression))
        {
          g_autofree char *shown = airlock_image_printable (d.media_type);

          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                       "%s: blob %s (layer %u of %s): media type '%s' is not a layer type "
                       "this version takes", source->reference, d.digest, i + 1, label, shown);
          return NULL;
        }
      layer = g_new0 (AirlockImageLayer, 1);
      layer->digest = g_strdup (d.digest);
      layer->size = d.size;
      layer->media_type = g_strdup (d.media_type);
      layer->compression = compression;
      g_ptr_array_add (image->layers, layer);
      if (!g_hash_table_contains (source->layer_context, d.digest))
        g_hash_table_insert (source->layer_context, g_strdup (d.digest),
                             g_strdup_printf ("layer %u of %s", i + 1, label));
    }
  if (!take_config (source, config, config_what, image, error))
    return NULL;
  return g_steal_pointer (&image);
}

void
airlock_image_free (AirlockImage *image)
{
  if (!image)
    return;
  g_free (image->reference);
  g_free (image->platform);
  g_free (image->index_digest);
  g_free (image->manifest_digest);
  g_free (image->config_digest);
  g_clear_pointer (&image->layers, g_ptr_array_unref);
  g_strfreev (image->entrypoint);
  g_strfreev (image->cmd);
  g_strfreev (image->env);
  g_free (image->working_dir);
  g_free (image->user);
  g_free (image);
}

GInputStream *
airlock_image_open_layer (AirlockImageSource *source, const AirlockImageLayer *layer,
                          GError **error)
{
  const char *context = g_hash_table_lookup (source->layer_context, layer->digest);
  g_autofree char *what = g_strdup_printf ("%s: blob %s (%s)", source->reference, layer->digest,
                                           context ? context : "layer");
  g_autofree char *hex = parse_digest (layer->digest, what, error);
  g_autofree char *path = NULL;
  g_autoptr (GInputStream) raw = NULL;
  g_autoptr (GError) local = NULL;
  guint64 stored;

  if (!hex)
    return NULL;
  path = source->kind == SOURCE_DOCKER_ARCHIVE
           ? g_strdup (g_hash_table_lookup (source->layer_paths, layer->digest))
           : g_strconcat ("blobs/sha256/", hex, NULL);
  if (!path)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "%s: not a layer of this image", what);
      return NULL;
    }
  raw = airlock_blob_store_open (source->store, path, &stored, &local);
  if (!raw)
    {
      g_set_error (error, local->domain, local->code, "%s: missing (%s)", what, local->message);
      return NULL;
    }
  if (stored != layer->size)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_DIGEST,
                   "%s: %" G_GUINT64_FORMAT " bytes, the manifest says %" G_GUINT64_FORMAT, what,
                   stored, layer->size);
      return NULL;
    }
  return airlock_layer_stream_new (g_steal_pointer (&raw), layer->size, hex, layer->compression,
                                   what);
}
