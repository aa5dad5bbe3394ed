/* The content-addressed cache directory toolbox: lock, stale builds,
 * scratch builds, install, manifests (see cache-dir-private.h for the
 * protocol and who uses it). */
#define _GNU_SOURCE

#include "config.h"

#include "cache-dir-private.h"
#include "fsutil-private.h"
#include "json-bounded-private.h"
#include "json-util-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

void
airlock_cache_report (const AirlockCacheDir *cd, const char *stage, guint64 done, guint64 total)
{
  if (cd->progress)
    cd->progress (stage, done, total, cd->progress_data);
}

gboolean
airlock_cache_set_io_error (const AirlockCacheDir *cd, GError **error, int errsv,
                            const char *action, const char *path)
{
  g_set_error (error, cd->error_domain, cd->error_code, "cannot %s '%s': %s", action, path,
               g_strerror (errsv));
  return FALSE;
}

int
airlock_cache_lock (const AirlockCacheDir *cd, const char *wait_stage, GError **error)
{
  g_autofree char *path = g_build_filename (cd->dir, AIRLOCK_CACHE_LOCK_FILE, NULL);
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  int r;

  if (fd < 0)
    {
      airlock_cache_set_io_error (cd, error, errno, "open lock file", path);
      return -1;
    }
  r = flock (fd, LOCK_EX | LOCK_NB);
  if (r < 0 && errno == EWOULDBLOCK)
    {
      airlock_cache_report (cd, wait_stage, 0, 0);
      do
        r = flock (fd, LOCK_EX);
      while (r < 0 && errno == EINTR);
    }
  if (r < 0)
    {
      airlock_cache_set_io_error (cd, error, errno, "lock", path);
      close (fd);
      return -1;
    }
  return fd;
}

void
airlock_cache_remove_stale (const AirlockCacheDir *cd)
{
  g_autoptr (GDir) dir = g_dir_open (cd->dir, 0, NULL);
  const char *name;

  while (dir && (name = g_dir_read_name (dir)))
    if (g_str_has_prefix (name, AIRLOCK_CACHE_BUILD_PREFIX)
        || g_str_has_prefix (name, AIRLOCK_CACHE_OLD_PREFIX))
      {
        g_autofree char *path = g_build_filename (cd->dir, name, NULL);
        airlock_rm_rf (path);
      }
}

char *
airlock_cache_new_build (const AirlockCacheDir *cd, gboolean directory, const char *what,
                         GError **error)
{
  g_autofree char *tmpl = g_build_filename (cd->dir, AIRLOCK_CACHE_BUILD_PREFIX "XXXXXX", NULL);
  g_autofree char *action = g_strdup_printf ("create %s in", what);
  int fd;

  if (directory)
    {
      if (!g_mkdtemp_full (tmpl, 0755))
        {
          airlock_cache_set_io_error (cd, error, errno, action, cd->dir);
          return NULL;
        }
      return g_steal_pointer (&tmpl);
    }
  fd = g_mkstemp_full (tmpl, O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      airlock_cache_set_io_error (cd, error, errno, action, cd->dir);
      return NULL;
    }
  close (fd);
  return g_steal_pointer (&tmpl);
}

gboolean
airlock_cache_install (const AirlockCacheDir *cd, const char *tmp, const char *dest,
                       const char *what, GError **error)
{
  g_autofree char *move_new = g_strdup_printf ("move the new %s to", what);
  g_autofree char *move_old = NULL;
  g_autofree char *old_tmpl = NULL;
  g_autofree char *old = NULL;

  if (rename (tmp, dest) == 0)
    return TRUE;
  if (errno != ENOTEMPTY && errno != EEXIST)
    return airlock_cache_set_io_error (cd, error, errno, move_new, dest);
  /* A directory over an existing one (--force): swap, then remove the old. */
  if (renameat2 (AT_FDCWD, tmp, AT_FDCWD, dest, RENAME_EXCHANGE) == 0)
    {
      airlock_rm_rf (tmp);
      return TRUE;
    }
  /* File systems without RENAME_EXCHANGE: move the old one aside first. */
  old_tmpl = g_build_filename (cd->dir, AIRLOCK_CACHE_OLD_PREFIX "XXXXXX", NULL);
  old = g_mkdtemp (g_steal_pointer (&old_tmpl));
  if (!old)
    return airlock_cache_set_io_error (cd, error, errno, "create a directory in", cd->dir);
  move_old = g_strdup_printf ("move the old %s", what);
  if (rename (dest, old) < 0)
    return airlock_cache_set_io_error (cd, error, errno, move_old, dest);
  if (rename (tmp, dest) < 0)
    return airlock_cache_set_io_error (cd, error, errno, move_new, dest);
  airlock_rm_rf (old);
  return TRUE;
}

JsonNode *
airlock_cache_manifest_read (const char *path, struct stat *ret_st, GError **error)
{
  g_autoptr (JsonNode) parsed = NULL;
  struct stat st;

  if (lstat (path, &st) < 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "cannot read '%s': %s",
                   path, g_strerror (errsv));
      return NULL;
    }
  parsed = airlock_json_load_bounded (path, NULL, error);
  if (!parsed)
    return NULL;
  if (!JSON_NODE_HOLDS_OBJECT (parsed))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "not a JSON object");
      return NULL;
    }
  if (ret_st)
    *ret_st = st;
  return g_steal_pointer (&parsed);
}

gboolean
airlock_cache_manifest_matches (JsonObject *root, const char *builder, const char *key)
{
  return g_strcmp0 (airlock_json_get_string (root, "builder"), builder) == 0
         && g_strcmp0 (airlock_json_get_string (root, "key"), key) == 0;
}

JsonNode *
airlock_cache_manifest_lookup (const char *path, const char *name, const char *builder,
                               const char *key, const char *absent_why, struct stat *ret_st,
                               char **ret_why)
{
  g_autoptr (GError) local_error = NULL;
  g_autoptr (JsonNode) parsed = airlock_cache_manifest_read (path, ret_st, &local_error);

  if (!parsed)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        *ret_why = g_strdup (absent_why);
      else
        *ret_why = g_strdup_printf ("its %s cannot be read: %s", name, local_error->message);
      return NULL;
    }
  if (!airlock_cache_manifest_matches (json_node_get_object (parsed), builder, key))
    {
      *ret_why = g_strdup_printf ("its %s is for other inputs", name);
      return NULL;
    }
  return g_steal_pointer (&parsed);
}

gboolean
airlock_cache_modified_after (const struct stat *st, const struct stat *manifest_st)
{
  return st->st_mtim.tv_sec > manifest_st->st_mtim.tv_sec
         || (st->st_mtim.tv_sec == manifest_st->st_mtim.tv_sec
             && st->st_mtim.tv_nsec > manifest_st->st_mtim.tv_nsec);
}

gboolean
airlock_cache_check_file (const char *dir, const char *file, gint64 size,
                          const struct stat *manifest_st, char **ret_why)
{
  g_autofree char *path = g_build_filename (dir, file, NULL);
  struct stat st;

  if (lstat (path, &st) < 0 || !S_ISREG (st.st_mode))
    {
      *ret_why = g_strdup_printf ("'%s' is missing", file);
      return FALSE;
    }
  if (st.st_size != size)
    {
      *ret_why = g_strdup_printf ("'%s' is %" G_GINT64_FORMAT " bytes, the manifest says %"
                                  G_GINT64_FORMAT, file, (gint64) st.st_size, size);
      return FALSE;
    }
  if (airlock_cache_modified_after (&st, manifest_st))
    {
      *ret_why = g_strdup_printf ("'%s' was modified after it was built", file);
      return FALSE;
    }
  return TRUE;
}

gboolean
airlock_cache_manifest_write (JsonBuilder *b, const char *path, GFileSetContentsFlags flags,
                              GError **error)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  g_autofree char *text = NULL;

  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 2);
  text = json_generator_to_data (gen, NULL);
  return g_file_set_contents_full (path, text, -1, flags, 0644, error);
}
