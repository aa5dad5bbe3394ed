/* Writing and checking an initramfs variant (initramfs-variant-private.h):
 * the testroot's and the shell's builds share all of it but the archive's
 * entries and a few manifest members. */
#include "config.h"

#include "guestimg/initramfs-variant-private.h"

#include "cache-dir-private.h"
#include "guestimg/guest-image.h"
#include "json-util-private.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  const char *stage;
  AirlockProgressFunc progress;
  gpointer progress_data;
} CpioProgress;

static void
cpio_progress (guint done, guint total, gpointer user_data)
{
  CpioProgress *c = user_data;

  c->progress (c->stage, done, total, c->progress_data);
}

gboolean
airlock_initramfs_variant_write (const AirlockInitramfsVariantKind *kind, AirlockCpio *cpio,
                                 const char *key, AirlockArch arch, const char *base_path,
                                 const char *base_sha256, const char *dir,
                                 AirlockInitramfsVariantDescribe describe, gpointer describe_data,
                                 AirlockProgressFunc progress, gpointer progress_data,
                                 GError **error)
{
  g_autofree char *out_path = g_build_filename (dir, kind->initramfs_file, NULL);
  g_autofree char *manifest_path = g_build_filename (dir, kind->manifest_file, NULL);
  g_autofree char *stage = g_strdup_printf ("write %s", kind->what);
  g_autoptr (GFile) out_file = g_file_new_for_path (out_path);
  g_autoptr (GFileOutputStream) file_out = NULL;
  g_autoptr (GOutputStream) out = NULL;
  g_autoptr (GMappedFile) base = NULL;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *sha256 = NULL;
  CpioProgress closure = { stage, progress, progress_data };
  GStatBuf st;

  base = g_mapped_file_new (base_path, FALSE, error);
  if (!base)
    {
      g_prefix_error (error, "cannot read initramfs '%s': ", base_path);
      return FALSE;
    }
  file_out = g_file_create (out_file, G_FILE_CREATE_NONE, NULL, error);
  if (!file_out)
    return FALSE;
  out = g_buffered_output_stream_new_sized (G_OUTPUT_STREAM (file_out), 1 << 20);
  /* The base archive ends with its trailer, padded to 4 bytes: the kernel
   * starts the next archive right after it. */
  if (!g_output_stream_write_all (out, g_mapped_file_get_contents (base),
                                  g_mapped_file_get_length (base), NULL, NULL, error)
      || !airlock_cpio_write (cpio, out, progress ? cpio_progress : NULL, &closure, error)
      || !g_output_stream_close (out, NULL, error))
    {
      g_prefix_error (error, "cannot write %s initramfs '%s': ", kind->what, out_path);
      return FALSE;
    }
  if (g_stat (out_path, &st) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot read '%s': %s", out_path, g_strerror (saved_errno));
      return FALSE;
    }
  sha256 = airlock_sha256_file (out_path, error);
  if (!sha256)
    return FALSE;

  /* Last: the manifest's mtime vouches for the file written before it. */
  json_builder_begin_object (b);
  airlock_json_set_str (b, "builder", kind->builder);
  airlock_json_set_str (b, "key", key);
  airlock_json_set_str (b, "arch", airlock_arch_to_string (arch));
  airlock_json_set_str (b, "base_initramfs_sha256", base_sha256);
  describe (b, describe_data);
  json_builder_set_member_name (b, "initramfs");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "file", kind->initramfs_file);
  airlock_json_set_int (b, "size", st.st_size);
  airlock_json_set_str (b, "sha256", sha256);
  json_builder_end_object (b);
  json_builder_end_object (b);
  return airlock_cache_manifest_write (b, manifest_path, G_FILE_SET_CONTENTS_CONSISTENT, error);
}

gboolean
airlock_initramfs_variant_cache_load (const AirlockInitramfsVariantKind *kind, const char *dir,
                                      const char *key, char **ret_path, char **ret_sha256,
                                      char **ret_why)
{
  g_autofree char *manifest_path = g_build_filename (dir, kind->manifest_file, NULL);
  g_autofree char *path = g_build_filename (dir, kind->initramfs_file, NULL);
  g_autoptr (JsonNode) parsed = NULL;
  JsonObject *root, *initramfs;
  const char *sha256;
  gint64 size;
  struct stat manifest_st;

  parsed = airlock_cache_manifest_lookup (manifest_path, "manifest", kind->builder, key,
                                          "not built yet", &manifest_st, ret_why);
  if (!parsed)
    return FALSE;
  root = json_node_get_object (parsed);
  initramfs = airlock_json_get_object (root, "initramfs");
  sha256 = airlock_json_get_string (initramfs, "sha256");
  if (!sha256 || !airlock_json_get_int (initramfs, "size", &size))
    {
      *ret_why = g_strdup ("its manifest has no valid initramfs output");
      return FALSE;
    }
  if (!airlock_cache_check_file (dir, kind->initramfs_file, size, &manifest_st, ret_why))
    return FALSE;
  *ret_path = g_steal_pointer (&path);
  *ret_sha256 = g_strdup (sha256);
  return TRUE;
}
