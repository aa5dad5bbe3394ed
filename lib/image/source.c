/* OCI image intake, the public API (image.h): a reference → its
 * transport (a bare path gets the one it needs suggested), the store its
 * files are read from, and the image each arch resolves to.  What a
 * transport's JSON says is read by oci.c (oci:, oci-archive:, docker://
 * and containers-storage: once copied into the cache by remote.c) and
 * docker-archive.c; layers are opened here, through the verifying stream
 * of layer-stream.c.
 *
 * The image is untrusted input.  Each JSON blob is bounded before it is
 * read, hashed before it is parsed, and only then believed (json-blob.c);
 * the layer list is bounded before it is walked; only media types we know
 * are taken, so a new kind of blob is a clear error rather than a guess. */
#include "config.h"

#include "image/descriptor-private.h"
#include "image/docker-archive-private.h"
#include "image/image-private.h"
#include "image/layer-stream-private.h"
#include "image/oci-private.h"
#include "image/printable-private.h"
#include "image/remote-private.h"

#include <string.h>

static void
manifest_choice_free (gpointer data)
{
  AirlockManifestChoice *c = data;

  g_clear_pointer (&c->descriptor, json_node_unref);
  g_free (c->index_digest);
  g_free (c->where);
  g_free (c->os);
  g_free (c->architecture);
  g_free (c->variant);
  g_free (c);
}

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
  source->docker_layers = g_ptr_array_new_with_free_func (airlock_image_layer_free);

  if (airlock_image_reference_is_remote (reference))
    {
      /* Copied into the cache by skopeo, then read as any OCI layout:
       * every blob checked against its digest.  The reference stays the
       * one given, for messages and for what a bundle records. */
      g_autofree char *dir = airlock_image_fetch_remote (reference, cache_dir, error);

      if (!dir)
        return NULL;
      source->kind = AIRLOCK_SOURCE_OCI_DIR;
      source->store = airlock_blob_store_new_dir (dir, &local);
      if (!source->store)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, local->code, "%s: %s", reference, local->message);
          return NULL;
        }
      if (!airlock_image_oci_open (source, error))
        return NULL;
      return g_steal_pointer (&source);
    }
  if (g_strcmp0 (transport, "oci") == 0)
    source->kind = AIRLOCK_SOURCE_OCI_DIR;
  else if (g_strcmp0 (transport, "oci-archive") == 0)
    source->kind = AIRLOCK_SOURCE_OCI_ARCHIVE;
  else if (g_strcmp0 (transport, "docker-archive") == 0)
    source->kind = AIRLOCK_SOURCE_DOCKER_ARCHIVE;
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

  source->store = source->kind == AIRLOCK_SOURCE_OCI_DIR
                    ? airlock_blob_store_new_dir (parts[0], &local)
                    : airlock_blob_store_new_archive (parts[0], &local);
  if (!source->store)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, local->code, "%s: %s", reference, local->message);
      return NULL;
    }
  if (!(source->kind == AIRLOCK_SOURCE_DOCKER_ARCHIVE ? airlock_image_docker_open (source, error)
                                              : airlock_image_oci_open (source, error)))
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
      AirlockManifestChoice *choice = source->choices->pdata[i];
      AirlockArch arch;

      /* An index may leave an entry's platform to its config; a
       * docker-archive's one choice always knows it. */
      if (!airlock_image_oci_ensure_platform (source, choice, error))
        return NULL;
      if (airlock_image_platform_is_arch (choice->os, choice->architecture, choice->variant,
                                          &arch))
        {
          if (!seen[arch])
            g_array_append_val (arches, arch);
          seen[arch] = TRUE;
        }
      else
        {
          g_autofree char *p = airlock_image_platform_string (choice->os, choice->architecture,
                                                              choice->variant);
          if (!g_ptr_array_find_with_equal_func (others, p, g_str_equal, NULL))
            g_ptr_array_add (others, g_steal_pointer (&p));
        }
    }
  if (ret_others)
    *ret_others = g_steal_pointer (&others);
  return g_steal_pointer (&arches);
}

AirlockImage *
airlock_image_resolve (AirlockImageSource *source, AirlockArch arch, GError **error)
{
  g_autofree char *label = g_strdup_printf ("linux/%s", airlock_arch_to_string (arch));
  g_autoptr (GString) has = g_string_new (NULL);
  AirlockManifestChoice *choice = NULL;

  for (guint i = 0; i < source->choices->len && !choice; i++)
    {
      AirlockManifestChoice *c = source->choices->pdata[i];
      AirlockArch a;
      g_autofree char *p = NULL;

      if (!airlock_image_oci_ensure_platform (source, c, error))
        return NULL;
      if (airlock_image_platform_is_arch (c->os, c->architecture, c->variant, &a) && a == arch)
        choice = c;
      p = airlock_image_platform_string (c->os, c->architecture, c->variant);
      g_string_append_printf (has, "%s%s", has->len ? ", " : "", p);
    }
  airlock_image_printable_list_bound (has);
  if (!choice)
    {
      AirlockManifestChoice *first = source->choices->len ? source->choices->pdata[0] : NULL;
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NO_ARCH,
                   "%s: %s has no manifest for %s (it has %s)", source->reference,
                   first ? first->where : "the image", label, has->len ? has->str : "none");
      return NULL;
    }
  if (source->kind == AIRLOCK_SOURCE_DOCKER_ARCHIVE)
    return airlock_image_docker_resolve (source, arch, choice, error);
  return airlock_image_oci_resolve (source, arch, choice, label, error);
}

GInputStream *
airlock_image_open_layer (AirlockImageSource *source, const AirlockImageLayer *layer,
                          GError **error)
{
  const char *context = g_hash_table_lookup (source->layer_context, layer->digest);
  g_autofree char *what = g_strdup_printf ("%s: blob %s (%s)", source->reference, layer->digest,
                                           context ? context : "layer");
  g_autofree char *hex = airlock_image_parse_digest (layer->digest, what, error);
  g_autofree char *path = NULL;
  g_autoptr (GInputStream) raw = NULL;
  g_autoptr (GError) local = NULL;
  guint64 stored;

  if (!hex)
    return NULL;
  path = source->kind == AIRLOCK_SOURCE_DOCKER_ARCHIVE
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
