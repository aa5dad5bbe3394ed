/* OCI images (oci:, oci-archive:, and what skopeo copied into the cache):
 * index.json → image indexes, nested up to MAX_INDEX_DEPTH → the manifest
 * of each platform → its config and layers.  Every blob is read through
 * json-blob.c (bounded, size and digest checked, then parsed); the index
 * tree is bounded as a whole; only media types we know are taken, so a new
 * kind of blob is a clear error rather than a guess. */
#include "config.h"

#include "image/image-private.h"
#include "image/json-blob-private.h"
#include "image/oci-private.h"
#include "image/printable-private.h"
#include "json-util-private.h"

#include <string.h>

/* Bounds on what an image may ask of us. */
#define MAX_INDEX_ENTRIES 1000
#define MAX_INDEX_DEPTH 4

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define REF_NAME_ANNOTATION "org.opencontainers.image.ref.name"

static gboolean
is_index_type (const char *media_type)
{
  return g_strcmp0 (media_type, MT_OCI_INDEX) == 0 || g_strcmp0 (media_type, MT_DOCKER_LIST) == 0;
}

static gboolean
is_manifest_type (const char *media_type)
{
  return g_strcmp0 (media_type, MT_OCI_MANIFEST) == 0 ||
         g_strcmp0 (media_type, AIRLOCK_MT_DOCKER_MANIFEST) == 0;
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
    { AIRLOCK_MT_DOCKER_LAYER_TAR, AIRLOCK_LAYER_PLAIN },
  };

  for (guint i = 0; i < G_N_ELEMENTS (known); i++)
    if (g_str_equal (media_type, known[i].media_type))
      {
        *ret = known[i].compression;
        return TRUE;
      }
  return FALSE;
}

/* ---- index → choices ---------------------------------------------------- */

static gboolean
check_index (JsonObject *index, const char *what, GError **error)
{
  gint64 version = 0;
  const char *media_type = airlock_json_get_string (index, "mediaType");
  JsonArray *manifests = airlock_json_get_array (index, "manifests");

  if (!airlock_json_get_int (index, "schemaVersion", &version) || version != 2)
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
      g_auto (AirlockImageDescriptor) d = { NULL };
      g_autofree char *what = g_strdup_printf ("%s: %s, entry %u", source->reference, where, i + 1);
      JsonObject *platform = airlock_json_get_object (entry, "platform");

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
      if (!airlock_image_parse_descriptor (node, what, &d, error))
        return FALSE;
      /* Build attestations (buildx) describe an image, they are not one. */
      if (airlock_json_get_string (airlock_json_get_object (entry, "annotations"),
                                   "vnd.docker.reference.type"))
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
          nested = airlock_image_read_json_blob (source, &d, NULL, "index", where, error);
          if (!nested || !check_index (json_node_get_object (nested), blob_what, error))
            return FALSE;
          manifests = airlock_json_get_array (json_node_get_object (nested), "manifests");
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
          AirlockManifestChoice *choice = g_new0 (AirlockManifestChoice, 1);

          choice->descriptor = json_node_ref (node);
          choice->index_digest = g_strdup (index_digest);
          choice->where = g_strdup (where);
          if (platform && airlock_json_get_string (platform, "os") &&
              airlock_json_get_string (platform, "architecture"))
            {
              choice->platform_known = choice->platform_from_index = TRUE;
              choice->os = g_strdup (airlock_json_get_string (platform, "os"));
              choice->architecture = g_strdup (airlock_json_get_string (platform, "architecture"));
              choice->variant = g_strdup (airlock_json_get_string (platform, "variant"));
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
                          ? airlock_json_get_string (
                              airlock_json_get_object (json_node_get_object (e), "annotations"),
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

gboolean
airlock_image_oci_open (AirlockImageSource *source, GError **error)
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
  root = airlock_image_read_top_json (source, "index.json", error);
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
  manifests = airlock_json_get_array (json_node_get_object (root), "manifests");

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
      tag = airlock_json_get_string (
        airlock_json_get_object (json_node_get_object (e), "annotations"), REF_NAME_ANNOTATION);
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
load_manifest (AirlockImageSource *source, AirlockManifestChoice *choice, const char *label,
               LoadedManifest *ret, GError **error)
{
  g_auto (AirlockImageDescriptor) d = { NULL };
  g_auto (AirlockImageDescriptor) config = { NULL };
  g_autofree char *entry_what = g_strdup_printf ("%s: %s", source->reference, choice->where);
  g_autofree char *manifest_context = g_strdup_printf ("manifest of %s", label);
  g_autofree char *config_context = g_strdup_printf ("config of %s", label);
  g_autofree char *what = NULL;
  g_autofree char *whose = NULL;
  JsonObject *manifest;
  const char *media_type;
  gint64 version = 0;

  if (!airlock_image_parse_descriptor (choice->descriptor, entry_what, &d, error))
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
  ret->manifest = airlock_image_read_json_blob (source, &d, NULL, manifest_context, whose, error);
  if (!ret->manifest)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (ret->manifest))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a JSON object", what);
      return FALSE;
    }
  manifest = json_node_get_object (ret->manifest);
  media_type = airlock_json_get_string (manifest, "mediaType");
  if (!airlock_json_get_int (manifest, "schemaVersion", &version) || version != 2)
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
  if (!airlock_image_parse_descriptor (json_object_get_member (manifest, "config"), what, &config,
                                       error))
    return FALSE;
  if (!g_str_equal (config.media_type, MT_OCI_CONFIG) &&
      !g_str_equal (config.media_type, AIRLOCK_MT_DOCKER_CONFIG))
    {
      g_autofree char *shown = airlock_image_printable (config.media_type);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_UNSUPPORTED,
                   "%s: config media type '%s' is not an image config (an artifact?)", what,
                   shown);
      return FALSE;
    }
  ret->config = airlock_image_read_json_blob (source, &config, NULL, config_context,
                                              "the manifest", error);
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

gboolean
airlock_image_oci_ensure_platform (AirlockImageSource *source, AirlockManifestChoice *choice,
                                   GError **error)
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
  if (!airlock_json_get_string (config, "os") || !airlock_json_get_string (config, "architecture"))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: blob %s (config): no os or architecture", source->reference,
                   loaded.config_digest);
      return FALSE;
    }
  choice->os = g_strdup (airlock_json_get_string (config, "os"));
  choice->architecture = g_strdup (airlock_json_get_string (config, "architecture"));
  choice->variant = g_strdup (airlock_json_get_string (config, "variant"));
  choice->platform_known = TRUE;
  return TRUE;
}

/* ---- resolving one platform --------------------------------------------- */

AirlockImage *
airlock_image_oci_resolve (AirlockImageSource *source, AirlockArch arch,
                           AirlockManifestChoice *choice, const char *label, GError **error)
{
  g_auto (LoadedManifest) loaded = { NULL };
  g_autoptr (AirlockImage) image = NULL;
  g_autofree char *manifest_what = NULL;
  g_autofree char *config_what = NULL;
  g_auto (AirlockImageDescriptor) manifest_d = { NULL };
  JsonObject *manifest, *config;
  JsonArray *layers;
  const char *config_os, *config_arch, *config_variant;
  AirlockArch config_is;
  guint n_layers;

  if (!load_manifest (source, choice, label, &loaded, error))
    return NULL;
  (void) airlock_image_parse_descriptor (choice->descriptor, "", &manifest_d, NULL);
  image = airlock_image_new_for_choice (source, arch, choice);
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
  config_os = airlock_json_get_string (config, "os");
  config_arch = airlock_json_get_string (config, "architecture");
  config_variant = airlock_json_get_string (config, "variant");
  if (!airlock_image_platform_is_arch (config_os, config_arch, config_variant, &config_is) ||
      config_is != arch)
    {
      g_autofree char *p = airlock_image_platform_string (config_os ? config_os : "?",
                                                          config_arch ? config_arch : "?",
                                                          config_variant);
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
      image->platform = airlock_image_platform_string (config_os, config_arch, config_variant);
    }

  layers = airlock_json_get_array (manifest, "layers");
  if (!layers)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: no 'layers' list", manifest_what);
      return NULL;
    }
  /* OCI layers are named by their stored digest; the diff_ids are only
   * counted, so the config and the manifest describe the same image. */
  if (!airlock_image_config_diff_ids (config, layers, manifest_what, "the manifest", config_what,
                                      error))
    return NULL;
  n_layers = json_array_get_length (layers);
  for (guint i = 0; i < n_layers; i++)
    {
      g_auto (AirlockImageDescriptor) d = { NULL };
      g_autofree char *what = g_strdup_printf ("%s, layer %u", manifest_what, i + 1);
      AirlockImageLayer *layer;
      AirlockLayerCompression compression;

      if (!airlock_image_parse_descriptor (json_array_get_element (layers, i), what, &d, error))
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
  if (!airlock_image_take_config (config, config_what, image, error))
    return NULL;
  return g_steal_pointer (&image);
}
