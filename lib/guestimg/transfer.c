#define _GNU_SOURCE

#include "config.h"

#include "guestimg/transfer-private.h"

#include "airlock-version.h"
#include "cache-dir-private.h"
#include "fsutil-private.h"
#include "guestimg/guest-image.h"
#include "guestimg/manifest-private.h"
#include "json-bounded-private.h"
#include "json-util-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The index is a few kilobytes; a file of the cache is at most a kernel or
 * an initramfs with a testroot (tens of megabytes).  Far above both, so a
 * hostile archive cannot make the import write without end. */
#define INDEX_MAX (1024 * 1024)
#define FILE_MAX ((guint64) 4 * 1024 * 1024 * 1024)

typedef struct archive_entry archive_entry_t;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (archive_entry_t, archive_entry_free)

typedef struct {
  char *rel;        /* "guest/amd64/<key>/vmlinux" */
  char *path;       /* in the cache */
  guint64 size;
  char *sha256;
  struct timespec mtime;
} ExportFile;

static void
export_file_free (ExportFile *f)
{
  g_free (f->rel);
  g_free (f->path);
  g_free (f->sha256);
  g_free (f);
}

static int
compare_strings (gconstpointer a, gconstpointer b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Every regular file under @cache_dir/@rel, in name order.  The cache holds
 * nothing else; anything else (a symlink) is refused rather than followed. */
static gboolean
collect_files (const char *cache_dir, const char *rel, GPtrArray *files, GError **error)
{
  g_autofree char *path = g_build_filename (cache_dir, rel, NULL);
  g_autoptr (GDir) dir = g_dir_open (path, 0, error);
  g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (!dir)
    return FALSE;
  while ((name = g_dir_read_name (dir)))
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *child_rel = g_build_filename (rel, names->pdata[i], NULL);
      g_autofree char *child = g_build_filename (cache_dir, child_rel, NULL);
      ExportFile *f;
      struct stat st;

      if (lstat (child, &st) < 0)
        {
          int saved_errno = errno;
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "cannot export '%s': %s", child, g_strerror (saved_errno));
          return FALSE;
        }
      if (S_ISDIR (st.st_mode))
        {
          if (!collect_files (cache_dir, child_rel, files, error))
            return FALSE;
          continue;
        }
      if (!S_ISREG (st.st_mode))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "cannot export '%s': not a regular file", child);
          return FALSE;
        }
      f = g_new0 (ExportFile, 1);
      f->rel = g_steal_pointer (&child_rel);
      f->path = g_steal_pointer (&child);
      f->size = st.st_size;
      f->mtime = st.st_mtim;
      g_ptr_array_add (files, f);
    }
  return TRUE;
}

/* "guest/<arch>/<name>" of the cache directory @dir, which is inside
 * @cache_dir/guest/<arch>/. */
static char *
cache_rel (AirlockArch arch, const char *dir)
{
  g_autofree char *name = g_path_get_basename (dir);

  return g_build_filename ("guest", airlock_arch_to_string (arch), name, NULL);
}

/* The directories to export for @arch: the image (it must be built), and
 * whichever of its variants are. */
static gboolean
arch_dirs (const AirlockGuestImageOptions *base, AirlockArch arch, GPtrArray *dirs,
           GError **error)
{
  AirlockGuestImageOptions opts = *base;
  g_autoptr (AirlockGuestImage) image = NULL;

  opts.offline = TRUE;
  opts.force = FALSE;
  opts.progress = NULL;
  opts.with_testroot = FALSE;
  opts.with_shell = FALSE;
  image = airlock_guest_image_ensure (arch, &opts, error);
  if (!image)
    return FALSE;
  g_ptr_array_add (dirs, cache_rel (arch, image->dir));
  for (guint v = 0; v < 2; v++)
    {
      g_autoptr (AirlockGuestImage) variant = NULL;
      g_autofree char *dir = NULL;

      opts.with_testroot = v == 0;
      opts.with_shell = v == 1;
      /* Not built (or not buildable here): not exported, and not needed
       * by a gate. */
      variant = airlock_guest_image_ensure (arch, &opts, NULL);
      if (!variant)
        continue;
      dir = g_path_get_dirname (variant->initramfs_path);
      g_ptr_array_add (dirs, cache_rel (arch, dir));
    }
  return TRUE;
}

static gboolean
archive_failed (struct archive *a, const char *doing, const char *file, GError **error)
{
  g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
               "cannot %s '%s': %s", doing, file,
               archive_error_string (a) ? archive_error_string (a) : "libarchive failed");
  return FALSE;
}

/* One archive member: @data, or @path's bytes when @data is NULL. */
static gboolean
write_member (struct archive *a, const char *file, const char *name, GBytes *data,
              const ExportFile *f, GError **error)
{
  g_autoptr (archive_entry_t) entry = NULL;
  g_autoptr (GMappedFile) mapped = NULL;
  g_autoptr (GBytes) bytes = NULL;
  const char *p;
  gsize len, done = 0;

  if (data)
    bytes = g_bytes_ref (data);
  else
    {
      mapped = g_mapped_file_new (f->path, FALSE, error);
      if (!mapped)
        return FALSE;
      bytes = g_mapped_file_get_bytes (mapped);
    }
  p = g_bytes_get_data (bytes, &len);
  entry = archive_entry_new ();
  archive_entry_set_pathname (entry, name);
  archive_entry_set_filetype (entry, AE_IFREG);
  archive_entry_set_perm (entry, 0644);
  archive_entry_set_size (entry, len);
  /* The files keep their times: a cached image is checked on lookup for
   * outputs newer than its manifest. */
  if (f)
    archive_entry_set_mtime (entry, f->mtime.tv_sec, f->mtime.tv_nsec);
  if (archive_write_header (a, entry) != ARCHIVE_OK)
    return archive_failed (a, "write", file, error);
  while (done < len)
    {
      la_ssize_t n = archive_write_data (a, p + done, MIN (len - done, 1024 * 1024));
      if (n <= 0)
        return archive_failed (a, "write", file, error);
      done += n;
    }
  return TRUE;
}

static GBytes *
export_index (GPtrArray *files)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  char *text;

  json_builder_begin_object (b);
  airlock_json_set_str (b, "format", AIRLOCK_GUEST_EXPORT_FORMAT);
  airlock_json_set_str (b, "builder", AIRLOCK_GUEST_IMAGE_BUILDER);
  airlock_json_set_str (b, "airlock", AIRLOCK_VERSION);
  json_builder_set_member_name (b, "files");
  json_builder_begin_array (b);
  for (guint i = 0; i < files->len; i++)
    {
      ExportFile *f = files->pdata[i];

      json_builder_begin_object (b);
      airlock_json_set_str (b, "path", f->rel);
      airlock_json_set_int (b, "size", f->size);
      airlock_json_set_str (b, "sha256", f->sha256);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  text = airlock_json_builder_to_text (b, TRUE);
  return g_bytes_new_take (text, strlen (text));
}

static void
archive_write_free_ (struct archive *a)
{
  archive_write_free (a);
}

gboolean
airlock_guest_images_export (const AirlockGuestImageOptions *options, const gboolean *arches,
                             const char *file, GPtrArray **ret_dirs, GError **error)
{
  g_autoptr (GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func ((GDestroyNotify) export_file_free);
  g_autofree char *cache_dir = NULL;
  g_autofree char *parent = g_path_get_dirname (file);
  g_autofree char *tmp = g_build_filename (parent, ".airlock-export-XXXXXX", NULL);
  g_autoptr (GBytes) index = NULL;
  struct archive *a = NULL;
  gboolean ok = FALSE;
  int fd;

  if (options->cache_dir)
    cache_dir = g_canonicalize_filename (options->cache_dir, NULL);
  else
    {
      g_autofree char *dflt = airlock_default_cache_dir ();
      cache_dir = g_canonicalize_filename (dflt, NULL);
    }
  for (guint i = 0; i < AIRLOCK_N_ARCHES; i++)
    if (arches[i] && !arch_dirs (options, (AirlockArch) i, dirs, error))
      return FALSE;
  for (guint i = 0; i < dirs->len; i++)
    if (!collect_files (cache_dir, dirs->pdata[i], files, error))
      return FALSE;
  /* Hashed now, read again as it is written: the cache's directories are
   * never written in place (a build replaces a directory whole), so the
   * bytes are the same; an import checks them anyway. */
  for (guint i = 0; i < files->len; i++)
    {
      ExportFile *f = files->pdata[i];

      f->sha256 = airlock_sha256_file (f->path, error);
      if (!f->sha256)
        return FALSE;
    }
  index = export_index (files);

  /* Written beside @file and renamed over it: a reader (a CI cache step)
   * never sees half an archive. */
  fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create '%s': %s", tmp, g_strerror (saved_errno));
      return FALSE;
    }
  a = archive_write_new ();
  if (archive_write_set_format_pax (a) != ARCHIVE_OK
      || archive_write_open_fd (a, fd) != ARCHIVE_OK)
    {
      archive_failed (a, "write", file, error);
      goto out;
    }
  if (!write_member (a, file, AIRLOCK_GUEST_EXPORT_INDEX, index, NULL, error))
    goto out;
  for (guint i = 0; i < files->len; i++)
    {
      ExportFile *f = files->pdata[i];

      if (!write_member (a, file, f->rel, NULL, f, error))
        goto out;
    }
  if (archive_write_close (a) != ARCHIVE_OK)
    {
      archive_failed (a, "write", file, error);
      goto out;
    }
  if (fsync (fd) < 0 || g_rename (tmp, file) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot write '%s': %s", file, g_strerror (saved_errno));
      goto out;
    }
  ok = TRUE;
  if (ret_dirs)
    *ret_dirs = g_steal_pointer (&dirs);

out:
  archive_write_free_ (a);
  close (fd);
  if (!ok)
    g_unlink (tmp);
  return ok;
}

/* ---- import ------------------------------------------------------------- */

static gboolean
is_hex (const char *s, gsize len)
{
  return strlen (s) == len && strspn (s, "0123456789abcdef") == len;
}

/* A cache directory's name: an image's key, or a stage's or variant's
 * prefix and key. */
static gboolean
cache_name_is_valid (const char *name)
{
  static const char *const prefixes[] = { "kernel-", "testroot-", "shell-" };

  if (is_hex (name, 64))
    return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (name, prefixes[i]) && is_hex (name + strlen (prefixes[i]), 64))
      return TRUE;
  return FALSE;
}

/* "guest/<arch>/<cache name>/<file>…" with plain file names: the path is
 * joined to the cache directory, so nothing may lead out of it. */
static gboolean
member_path_is_valid (const char *path, AirlockArch *ret_arch, char **ret_dir)
{
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  guint n = g_strv_length (parts);

  if (n < 4 || !g_str_equal (parts[0], "guest") || !airlock_arch_from_string (parts[1], ret_arch)
      || !cache_name_is_valid (parts[2]))
    return FALSE;
  for (guint i = 3; i < n; i++)
    {
      const char *c = parts[i];

      if (!*c || g_str_equal (c, ".") || g_str_equal (c, "..") || c[0] == '.'
          || strspn (c, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-")
               != strlen (c))
        return FALSE;
    }
  *ret_dir = g_strjoin ("/", parts[0], parts[1], parts[2], NULL);
  return TRUE;
}

typedef struct {
  char *path;
  char *dir;      /* "guest/<arch>/<name>" */
  AirlockArch arch;
  guint64 size;
  char *sha256;
  gboolean seen;
} ImportFile;

static void
import_file_free (ImportFile *f)
{
  g_free (f->path);
  g_free (f->dir);
  g_free (f->sha256);
  g_free (f);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ImportFile, import_file_free)

static gboolean
bad_archive (GError **error, const char *file, const char *why)
{
  g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
               "cannot import '%s': %s", file, why);
  return FALSE;
}

/* The index, as a table of path → ImportFile. */
static GHashTable *
parse_index (const char *file, const char *data, gsize len, GError **error)
{
  g_autoptr (GHashTable) table = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                        (GDestroyNotify) import_file_free);
  g_autoptr (JsonNode) root = airlock_json_parse_bounded (data, len, AIRLOCK_GUEST_EXPORT_INDEX,
                                                          error);
  JsonObject *o;
  JsonArray *array;

  if (!root)
    {
      g_prefix_error (error, "cannot import '%s': ", file);
      return NULL;
    }
  o = JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  if (g_strcmp0 (airlock_json_get_string (o, "format"), AIRLOCK_GUEST_EXPORT_FORMAT) != 0)
    {
      bad_archive (error, file, "its " AIRLOCK_GUEST_EXPORT_INDEX " is not of format '"
                                AIRLOCK_GUEST_EXPORT_FORMAT "'");
      return NULL;
    }
  array = airlock_json_get_array (o, "files");
  if (!array)
    {
      bad_archive (error, file, "its " AIRLOCK_GUEST_EXPORT_INDEX " has no 'files' list");
      return NULL;
    }
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonNode *e = json_array_get_element (array, i);
      JsonObject *fo = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
      const char *path = airlock_json_get_string (fo, "path");
      const char *sha256 = airlock_json_get_string (fo, "sha256");
      g_autoptr (ImportFile) f = NULL;
      g_autofree char *why = NULL;
      gint64 size;

      if (!path || !sha256 || !airlock_json_get_int (fo, "size", &size))
        {
          why = g_strdup_printf ("file %u of its " AIRLOCK_GUEST_EXPORT_INDEX " lacks a path, "
                                 "size or sha256", i + 1);
          bad_archive (error, file, why);
          return NULL;
        }
      f = g_new0 (ImportFile, 1);
      f->path = g_strdup (path);
      f->sha256 = g_strdup (sha256);
      if (!member_path_is_valid (f->path, &f->arch, &f->dir) || !is_hex (f->sha256, 64)
          || size < 0 || (guint64) size > FILE_MAX || g_hash_table_contains (table, f->path))
        {
          g_autofree char *shown = g_strescape (f->path, NULL);
          why = g_strdup_printf ("its " AIRLOCK_GUEST_EXPORT_INDEX " lists '%s' with an invalid "
                                 "path, size or sha256, or twice", shown);
          bad_archive (error, file, why);
          return NULL;
        }
      f->size = size;
      g_hash_table_insert (table, f->path, f);
      g_steal_pointer (&f);
    }
  return g_steal_pointer (&table);
}

/* Writes the member's data to @dest, hashing it; checks size and digest. */
static gboolean
extract_member (struct archive *a, struct archive_entry *entry, const char *file, ImportFile *f,
                const char *dest, GError **error)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *parent = g_path_get_dirname (dest);
  guint64 written = 0;
  char buf[64 * 1024];
  int fd;

  if (g_mkdir_with_parents (parent, 0755) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create directory '%s': %s", parent, g_strerror (saved_errno));
      return FALSE;
    }
  fd = open (dest, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create '%s': %s", dest, g_strerror (saved_errno));
      return FALSE;
    }
  for (;;)
    {
      la_ssize_t n = archive_read_data (a, buf, sizeof buf);

      if (n == 0)
        break;
      if (n < 0)
        {
          close (fd);
          return archive_failed (a, "import", file, error);
        }
      written += n;
      /* Never more than the index says: the excess is not even written. */
      if (written > f->size)
        break;
      g_checksum_update (sum, (const guchar *) buf, n);
      for (la_ssize_t done = 0; done < n;)
        {
          ssize_t w = write (fd, buf + done, n - done);
          if (w < 0 && errno == EINTR)
            continue;
          if (w < 0)
            {
              int saved_errno = errno;
              close (fd);
              g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                           "cannot write '%s': %s", dest, g_strerror (saved_errno));
              return FALSE;
            }
          done += w;
        }
    }
  if (written != f->size)
    {
      close (fd);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST,
                   "cannot import '%s': its '%s' is %s%" G_GUINT64_FORMAT " bytes, its index "
                   "says %" G_GUINT64_FORMAT, file, f->path, written > f->size ? "over " : "",
                   written > f->size ? f->size : written, f->size);
      return FALSE;
    }
  if (!g_str_equal (g_checksum_get_string (sum), f->sha256))
    {
      close (fd);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST,
                   "cannot import '%s': its '%s' has sha256 %s, its index says %s; nothing "
                   "was imported", file, f->path, g_checksum_get_string (sum), f->sha256);
      return FALSE;
    }
  if (archive_entry_mtime_is_set (entry))
    {
      struct timespec times[2] = {
        { 0, UTIME_OMIT },
        { archive_entry_mtime (entry), archive_entry_mtime_nsec (entry) },
      };
      futimens (fd, times);
    }
  if (close (fd) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot write '%s': %s", dest, g_strerror (saved_errno));
      return FALSE;
    }
  return TRUE;
}

static void
archive_read_free_ (struct archive *a)
{
  archive_read_free (a);
}

/* Reads the whole archive into @scratch, every member checked. */
static GHashTable *
read_archive (const char *file, const char *scratch, GError **error)
{
  g_autoptr (GHashTable) table = NULL;
  struct archive *a = archive_read_new ();
  struct archive_entry *entry;
  GHashTableIter iter;
  ImportFile *f;
  int r;

  archive_read_support_filter_all (a);
  archive_read_support_format_tar (a);
  if (archive_read_open_filename (a, file, 64 * 1024) != ARCHIVE_OK)
    {
      archive_failed (a, "import", file, error);
      archive_read_free_ (a);
      return NULL;
    }
  while ((r = archive_read_next_header (a, &entry)) == ARCHIVE_OK)
    {
      const char *name = archive_entry_pathname (entry);
      g_autofree char *dest = NULL;
      g_autofree char *shown = g_strescape (name ? name : "", NULL);
      g_autofree char *why = NULL;

      if (!table)
        {
          g_autofree char *data = NULL;
          la_int64_t size = archive_entry_size (entry);
          la_ssize_t n;

          /* The index comes first, so every file after it is checked as
           * it is read. */
          if (g_strcmp0 (name, AIRLOCK_GUEST_EXPORT_INDEX) != 0
              || archive_entry_filetype (entry) != AE_IFREG || size <= 0 || size > INDEX_MAX)
            {
              why = g_strdup_printf ("its first member is '%s', not " AIRLOCK_GUEST_EXPORT_INDEX
                                     " (not an export of airlock's guest images?)", shown);
              bad_archive (error, file, why);
              goto fail;
            }
          data = g_malloc (size);
          n = archive_read_data (a, data, size);
          if (n != size)
            {
              archive_failed (a, "import", file, error);
              goto fail;
            }
          table = parse_index (file, data, size, error);
          if (!table)
            goto fail;
          continue;
        }
      f = name ? g_hash_table_lookup (table, name) : NULL;
      if (!f || f->seen || archive_entry_filetype (entry) != AE_IFREG)
        {
          why = g_strdup_printf ("it holds '%s'%s", shown,
                                 !f ? ", which its index does not list"
                                 : f->seen ? " twice" : ", which is not a regular file");
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST,
                       "cannot import '%s': %s", file, why);
          goto fail;
        }
      f->seen = TRUE;
      dest = g_build_filename (scratch, f->path, NULL);
      if (!extract_member (a, entry, file, f, dest, error))
        goto fail;
    }
  if (r != ARCHIVE_EOF)
    {
      archive_failed (a, "import", file, error);
      goto fail;
    }
  if (!table)
    {
      bad_archive (error, file, "it is empty");
      goto fail;
    }
  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &f))
    if (!f->seen)
      {
        g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_DIGEST,
                     "cannot import '%s': its index lists '%s', which it does not hold", file,
                     f->path);
        goto fail;
      }
  archive_read_free_ (a);
  return g_steal_pointer (&table);

fail:
  archive_read_free_ (a);
  return NULL;
}

gboolean
airlock_guest_images_import (const char *cache_dir_option, const char *file,
                             GPtrArray **ret_dirs, GError **error)
{
  g_autofree char *cache_dir = NULL;
  g_autofree char *guest_dir = NULL;
  g_autofree char *scratch = NULL;
  g_autoptr (GHashTable) table = NULL;
  g_autoptr (GHashTable) dirs = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) installed = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) sorted = NULL;
  GHashTableIter iter;
  ImportFile *f;
  gboolean ok = FALSE;

  if (cache_dir_option)
    cache_dir = g_canonicalize_filename (cache_dir_option, NULL);
  else
    {
      g_autofree char *dflt = airlock_default_cache_dir ();
      cache_dir = g_canonicalize_filename (dflt, NULL);
    }
  guest_dir = g_build_filename (cache_dir, "guest", NULL);
  if (g_mkdir_with_parents (guest_dir, 0755) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create cache directory '%s': %s", guest_dir, g_strerror (saved_errno));
      return FALSE;
    }
  /* On the cache's file system, so each directory moves in by rename. */
  scratch = g_build_filename (guest_dir, ".import-XXXXXX", NULL);
  if (!g_mkdtemp_full (scratch, 0755))
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create a directory in '%s': %s", guest_dir, g_strerror (saved_errno));
      return FALSE;
    }
  table = read_archive (file, scratch, error);
  if (!table)
    goto out;

  sorted = g_ptr_array_new ();
  g_hash_table_iter_init (&iter, table);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &f))
    if (g_hash_table_insert (dirs, f->dir, f))
      g_ptr_array_add (sorted, f->dir);
  g_ptr_array_sort (sorted, compare_strings);
  for (guint i = 0; i < sorted->len; i++)
    {
      const char *rel = sorted->pdata[i];
      ImportFile *any = g_hash_table_lookup (dirs, rel);
      g_autofree char *from = g_build_filename (scratch, rel, NULL);
      g_autofree char *to = g_build_filename (cache_dir, rel, NULL);
      g_autofree char *arch_dir = g_path_get_dirname (to);
      g_autofree char *stage = g_strdup_printf ("wait for another airlock building the %s guest image",
                                                airlock_arch_to_string (any->arch));
      const AirlockCacheDir cd = { arch_dir, AIRLOCK_GUEST_IMAGE_ERROR,
                                   AIRLOCK_GUEST_IMAGE_ERROR_FAILED };
      gboolean moved;
      int lock_fd;

      if (g_mkdir_with_parents (arch_dir, 0755) < 0)
        {
          int saved_errno = errno;
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "cannot create cache directory '%s': %s", arch_dir,
                       g_strerror (saved_errno));
          goto out;
        }
      /* Under the builders' lock: a build of the same directory meanwhile
       * waits, and then finds it. */
      lock_fd = airlock_cache_lock (&cd, stage, error);
      if (lock_fd < 0)
        goto out;
      moved = airlock_cache_install (&cd, from, to, "guest image", error);
      close (lock_fd);
      if (!moved)
        goto out;
      g_ptr_array_add (installed, g_strdup (rel));
    }
  ok = TRUE;
  if (ret_dirs)
    *ret_dirs = g_steal_pointer (&installed);

out:
  airlock_rm_rf (scratch);
  return ok;
}
