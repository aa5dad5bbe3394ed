/* docker-archive: the tar `docker save` writes, read in place.  Its
 * manifest.json names each image's config and layers by path; the
 * config's name is its digest (the image ID) and its rootfs.diff_ids are
 * the layers' digests, so that one digest binds every byte of the image.
 * An archive holds no manifest: the one a registry would hold is made up
 * here, for the one digest the disk cache and the verdict name an image by. */
#include "config.h"

#include "image/docker-archive-private.h"
#include "image/image-private.h"
#include "image/json-blob-private.h"
#include "image/printable-private.h"
#include "json-util-private.h"

#include <string.h>

/* What a registry would hold for this image: a Docker v2 manifest naming
 * the config and the layers as stored.  The archive has none, and the disk
 * cache and the verdict need one digest for the image. */
static char *
docker_synthetic_manifest_digest (AirlockImageSource *source)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autofree char *text = NULL;
  g_autofree char *hex = NULL;

  json_builder_begin_object (builder);
  airlock_json_set_int (builder, "schemaVersion", 2);
  airlock_json_set_str (builder, "mediaType", AIRLOCK_MT_DOCKER_MANIFEST);
  json_builder_set_member_name (builder, "config");
  json_builder_begin_object (builder);
  airlock_json_set_str (builder, "mediaType", AIRLOCK_MT_DOCKER_CONFIG);
  airlock_json_set_int (builder, "size", source->docker_config_size);
  airlock_json_set_str (builder, "digest", source->docker_config_digest);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "layers");
  json_builder_begin_array (builder);
  for (guint i = 0; i < source->docker_layers->len; i++)
    {
      AirlockImageLayer *layer = source->docker_layers->pdata[i];
      json_builder_begin_object (builder);
      airlock_json_set_str (builder, "mediaType", layer->media_type);
      airlock_json_set_int (builder, "size", layer->size);
      airlock_json_set_str (builder, "digest", layer->digest);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  /* On one line, as json-glib writes it: the digest names disks already
   * in users' caches, so these bytes never change. */
  text = airlock_json_builder_to_text (builder, FALSE);
  hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
  return g_strconcat ("sha256:", hex, NULL);
}

static char *
repo_tags_of (JsonObject *image)
{
  JsonArray *tags = airlock_json_get_array (image, "RepoTags");
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
        JsonArray *tags = airlock_json_get_array (json_array_get_object_element (images, i),
                                                  "RepoTags");
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

gboolean
airlock_image_docker_open (AirlockImageSource *source, GError **error)
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
  AirlockManifestChoice *choice;
  guint n_layers;

  if (!airlock_blob_store_has (source->store, "manifest.json"))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "%s: not a docker-save archive: there is no manifest.json", source->reference);
      return FALSE;
    }
  root = airlock_image_read_top_json (source, "manifest.json", error);
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
  config_path = airlock_json_get_string (image, "Config");
  layers = airlock_json_get_array (image, "Layers");
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
  if (!airlock_image_is_sha256_hex (config_name))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: config file name '%s' does not carry its sha256", what, shown_config_path);
      return FALSE;
    }
  source->docker_config_digest = g_strconcat ("sha256:", config_name, NULL);
  config_what = g_strdup_printf ("%s: blob %s (config '%s')", source->reference,
                                 source->docker_config_digest, shown_config_path);
  config_bytes = airlock_image_read_bounded (source, config_path, config_what, error);
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
  source->docker_config = airlock_image_parse_json (g_bytes_get_data (config_bytes, NULL),
                                                    g_bytes_get_size (config_bytes), config_what,
                                                    error);
  if (!source->docker_config)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (source->docker_config))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: not a JSON object", config_what);
      return FALSE;
    }
  config = json_node_get_object (source->docker_config);

  choice = g_new0 (AirlockManifestChoice, 1);
  choice->where = g_strdup ("manifest.json");
  choice->os = g_strdup (airlock_json_get_string (config, "os"));
  choice->architecture = g_strdup (airlock_json_get_string (config, "architecture"));
  choice->variant = g_strdup (airlock_json_get_string (config, "variant"));
  choice->platform_known = choice->os && choice->architecture;
  g_ptr_array_add (source->choices, choice);
  if (!choice->platform_known)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "%s: no os or architecture", config_what);
      return FALSE;
    }
  platform = airlock_image_platform_string (choice->os, choice->architecture, choice->variant);

  /* Layers are named by path; their digests are the config's diff_ids
   * (docker save stores them uncompressed), so the config's digest binds
   * every byte of the image. */
  diff_ids = airlock_image_config_diff_ids (config, layers, what, "manifest.json", config_what,
                                            error);
  if (!diff_ids)
    return FALSE;
  n_layers = json_array_get_length (layers);
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
      g_autofree char *hex = airlock_image_parse_digest (diff_id, layer_what, error);
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
      layer->media_type = g_strdup (AIRLOCK_MT_DOCKER_LAYER_TAR);
      layer->compression = AIRLOCK_LAYER_PLAIN;
      g_ptr_array_add (source->docker_layers, layer);
      g_hash_table_insert (source->layer_paths, g_strdup (diff_id), g_strdup (path));
      g_hash_table_insert (source->layer_context, g_strdup (diff_id),
                           g_strdup_printf ("%s, '%s'", context, shown_path));
    }
  source->docker_manifest_digest = docker_synthetic_manifest_digest (source);
  return TRUE;
}

AirlockImage *
airlock_image_docker_resolve (AirlockImageSource *source, AirlockArch arch,
                              AirlockManifestChoice *choice, GError **error)
{
  g_autoptr (AirlockImage) image = airlock_image_new_for_choice (source, arch, choice);
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
  if (!airlock_image_take_config (json_node_get_object (source->docker_config), what, image,
                                  error))
    return NULL;
  return g_steal_pointer (&image);
}
