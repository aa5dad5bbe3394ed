/* Blob stores: an OCI layout directory, or a tar archive read in place.
 *
 * An archive is never extracted: opening it scans the tar headers once
 * (libarchive skips entry data by seeking) and indexes regular files by
 * path; reading a file opens the archive again and walks to that entry.
 * Nothing of the image is written to the host. */
#include "config.h"

#include "image/blob-private.h"
#include "image/printable-private.h"

#include <archive.h>
#include <archive_entry.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

/* A hostile archive could hold millions of empty entries to make every
 * later walk slow; real images have a few hundred. */
#define MAX_ARCHIVE_ENTRIES 100000
/* Symlinks followed from one path (docker save links duplicate layers). */
#define MAX_LINK_HOPS 8

typedef struct {
  guint ordinal;              /* header number in the archive, from 0 */
  guint64 size;
  char *link;                 /* normalized target of a link entry, or NULL */
} ArchiveEntry;

struct _AirlockBlobStore {
  char *dir;                  /* directory store */
  char *archive;              /* archive store */
  GHashTable *entries;        /* normalized path → ArchiveEntry */
};

static void
archive_entry_info_free (gpointer data)
{
  ArchiveEntry *entry = data;

  g_free (entry->link);
  g_free (entry);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ArchiveEntry, archive_entry_info_free)

typedef struct archive AirlockArchive;
static void
airlock_archive_free (AirlockArchive *a)
{
  archive_read_free (a);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockArchive, airlock_archive_free)

/* "./a//b/../c" → "a/c"; NULL when ".." climbs above the root or nothing
 * is left.  A leading '/' is ignored: archive paths are all relative to the
 * archive's root. */
static char *
normalize_path (const char *path)
{
  g_auto (GStrv) parts = g_strsplit (path, "/", -1);
  g_autoptr (GPtrArray) kept = g_ptr_array_new ();

  for (guint i = 0; parts[i]; i++)
    {
      if (!*parts[i] || g_str_equal (parts[i], "."))
        continue;
      if (g_str_equal (parts[i], ".."))
        {
          if (kept->len == 0)
            return NULL;
          g_ptr_array_remove_index (kept, kept->len - 1);
          continue;
        }
      g_ptr_array_add (kept, parts[i]);
    }
  if (kept->len == 0)
    return NULL;
  g_ptr_array_add (kept, NULL);
  return g_strjoinv ("/", (char **) kept->pdata);
}

AirlockBlobStore *
airlock_blob_store_new_dir (const char *dir, GError **error)
{
  AirlockBlobStore *store;

  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                   "'%s' is not a directory", dir);
      return NULL;
    }
  store = g_new0 (AirlockBlobStore, 1);
  store->dir = g_strdup (dir);
  return store;
}

static AirlockArchive *
archive_open (const char *file, GError **error)
{
  g_autoptr (AirlockArchive) a = archive_read_new ();

  /* Only tar, and only filters libarchive implements itself: never an
   * external program run on untrusted bytes. */
  archive_read_support_format_tar (a);
  archive_read_support_filter_none (a);
  archive_read_support_filter_gzip (a);
  archive_read_support_filter_zstd (a);
  archive_read_support_filter_xz (a);
  if (archive_read_open_filename (a, file, 64 * 1024) != ARCHIVE_OK)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "cannot read '%s' as a tar archive: %s", file, archive_error_string (a));
      return NULL;
    }
  return g_steal_pointer (&a);
}

/* Follows link entries to a regular file's entry; NULL when the path is
 * absent, dangles or loops. */
static ArchiveEntry *
lookup_entry (AirlockBlobStore *store, const char *path)
{
  g_autofree char *normalized = normalize_path (path);
  ArchiveEntry *entry = normalized ? g_hash_table_lookup (store->entries, normalized) : NULL;

  for (guint hops = 0; entry && entry->link; hops++)
    {
      if (hops == MAX_LINK_HOPS)
        return NULL;
      entry = g_hash_table_lookup (store->entries, entry->link);
    }
  return entry;
}

AirlockBlobStore *
airlock_blob_store_new_archive (const char *file, GError **error)
{
  g_autoptr (AirlockBlobStore) store = NULL;
  g_autoptr (AirlockArchive) a = NULL;
  g_autofree char *last = NULL;
  struct archive_entry *header;
  guint ordinal = 0;
  int r;

  if (!g_file_test (file, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_REFERENCE,
                   "'%s' is not a file", file);
      return NULL;
    }
  a = archive_open (file, error);
  if (!a)
    return NULL;
  store = g_new0 (AirlockBlobStore, 1);
  store->archive = g_strdup (file);
  store->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, archive_entry_info_free);

  for (; (r = archive_read_next_header (a, &header)) == ARCHIVE_OK || r == ARCHIVE_WARN; ordinal++)
    {
      g_autoptr (ArchiveEntry) entry = NULL;
      g_autofree char *path = NULL;
      const char *name = archive_entry_pathname (header);
      const char *hardlink = archive_entry_hardlink (header);
      mode_t type = archive_entry_filetype (header);

      if (ordinal == MAX_ARCHIVE_ENTRIES)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_LIMIT,
                       "archive '%s' has more than %d entries", file, MAX_ARCHIVE_ENTRIES);
          return NULL;
        }
      g_free (last);
      last = g_strdup (name ? name : "");
      path = name ? normalize_path (name) : NULL;
      if (!path || (type != AE_IFREG && type != AE_IFLNK && !hardlink))
        continue;
      entry = g_new0 (ArchiveEntry, 1);
      entry->ordinal = ordinal;
      entry->size = archive_entry_size (header);
      if (hardlink)
        entry->link = normalize_path (hardlink);
      else if (type == AE_IFLNK)
        {
          const char *target = archive_entry_symlink (header);
          g_autofree char *dir = g_path_get_dirname (path);
          g_autofree char *joined = target && *target != '/' ? g_build_path ("/", dir, target, NULL)
                                                             : g_strdup (target ? target : "");

          entry->link = normalize_path (joined);
        }
      if ((hardlink || type == AE_IFLNK) && !entry->link)
        continue;   /* points outside the archive: never followed */
      if (g_hash_table_contains (store->entries, path))
        {
          /* Two different bodies for one name: which one a tool reads is
           * up to the tool, so the image means nothing definite. */
          g_autofree char *shown = airlock_image_printable (path);

          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "archive '%s' holds '%s' twice", file, shown);
          return NULL;
        }
      g_hash_table_insert (store->entries, g_steal_pointer (&path), g_steal_pointer (&entry));
    }
  if (r != ARCHIVE_EOF)
    {
      g_autofree char *shown = airlock_image_printable (last);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "archive '%s' is damaged or cut short at or after entry '%s': %s", file,
                   shown, archive_error_string (a));
      return NULL;
    }
  return g_steal_pointer (&store);
}

void
airlock_blob_store_free (AirlockBlobStore *store)
{
  if (!store)
    return;
  g_free (store->dir);
  g_free (store->archive);
  g_clear_pointer (&store->entries, g_hash_table_unref);
  g_free (store);
}

gboolean
airlock_blob_store_has (AirlockBlobStore *store, const char *path)
{
  g_autofree char *normalized = NULL;
  g_autofree char *full = NULL;

  if (store->entries)
    return lookup_entry (store, path) != NULL;
  normalized = normalize_path (path);
  if (!normalized)
    return FALSE;
  full = g_build_filename (store->dir, normalized, NULL);
  return g_file_test (full, G_FILE_TEST_IS_REGULAR);
}

gboolean
airlock_blob_store_size (AirlockBlobStore *store, const char *path, guint64 *ret_size,
                         GError **error)
{
  g_autofree char *normalized = NULL;
  g_autofree char *full = NULL;
  g_autofree char *shown = NULL;
  GStatBuf st;

  if (store->entries)
    {
      ArchiveEntry *entry = lookup_entry (store, path);
      if (entry)
        {
          *ret_size = entry->size;
          return TRUE;
        }
    }
  else if ((normalized = normalize_path (path)) &&
           g_stat ((full = g_build_filename (store->dir, normalized, NULL)), &st) == 0 &&
           S_ISREG (st.st_mode))
    {
      *ret_size = st.st_size;
      return TRUE;
    }
  /* A docker-archive's manifest.json names its files. */
  shown = airlock_image_printable (path);
  g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
               "there is no file '%s' in '%s'", shown,
               store->entries ? store->archive : store->dir);
  return FALSE;
}

/* ---- one archive entry as a stream ------------------------------------- */

#define AIRLOCK_TYPE_ARCHIVE_ENTRY_STREAM (airlock_archive_entry_stream_get_type ())
G_DECLARE_FINAL_TYPE (AirlockArchiveEntryStream, airlock_archive_entry_stream, AIRLOCK,
                      ARCHIVE_ENTRY_STREAM, GInputStream)

struct _AirlockArchiveEntryStream {
  GInputStream parent_instance;
  struct archive *archive;    /* positioned at the entry's data */
  char *path;
};

G_DEFINE_TYPE (AirlockArchiveEntryStream, airlock_archive_entry_stream, G_TYPE_INPUT_STREAM)

static gssize
archive_entry_stream_read (GInputStream *stream, void *buffer, gsize count,
                           GCancellable *cancellable, GError **error)
{
  AirlockArchiveEntryStream *self = AIRLOCK_ARCHIVE_ENTRY_STREAM (stream);
  la_ssize_t n;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return -1;
  n = archive_read_data (self->archive, buffer, count);
  if (n < 0)
    {
      g_autofree char *shown = airlock_image_printable (self->path);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "archive entry '%s' is damaged or cut short: %s", shown,
                   archive_error_string (self->archive));
      return -1;
    }
  return n;
}

static gboolean
archive_entry_stream_close (GInputStream *stream, GCancellable *cancellable, GError **error)
{
  AirlockArchiveEntryStream *self = AIRLOCK_ARCHIVE_ENTRY_STREAM (stream);

  g_clear_pointer (&self->archive, archive_read_free);
  return TRUE;
}

static void
archive_entry_stream_finalize (GObject *object)
{
  AirlockArchiveEntryStream *self = AIRLOCK_ARCHIVE_ENTRY_STREAM (object);

  g_clear_pointer (&self->archive, archive_read_free);
  g_free (self->path);
  G_OBJECT_CLASS (airlock_archive_entry_stream_parent_class)->finalize (object);
}

static void
airlock_archive_entry_stream_class_init (AirlockArchiveEntryStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = archive_entry_stream_finalize;
  G_INPUT_STREAM_CLASS (klass)->read_fn = archive_entry_stream_read;
  G_INPUT_STREAM_CLASS (klass)->close_fn = archive_entry_stream_close;
}

static void
airlock_archive_entry_stream_init (AirlockArchiveEntryStream *self)
{
}

static GInputStream *
open_archive_entry (AirlockBlobStore *store, const char *path, guint64 *ret_size, GError **error)
{
  ArchiveEntry *entry = lookup_entry (store, path);
  g_autoptr (AirlockArchive) a = NULL;
  g_autofree char *shown = airlock_image_printable (path);
  AirlockArchiveEntryStream *stream;
  struct archive_entry *header;

  if (!entry)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "the archive has no file '%s'", shown);
      return NULL;
    }
  a = archive_open (store->archive, error);
  if (!a)
    return NULL;
  /* Walk to the entry again: the archive may be compressed, and a tar
   * has no index.  Skipping seeks over plain tar data. */
  for (guint i = 0; i <= entry->ordinal; i++)
    {
      int r = archive_read_next_header (a, &header);
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
        {
          g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                       "archive '%s' changed or is damaged before '%s': %s", store->archive,
                       shown, r == ARCHIVE_EOF ? "it ends early" : archive_error_string (a));
          return NULL;
        }
    }
  if ((guint64) archive_entry_size (header) != entry->size)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "archive '%s' changed while it was read ('%s')", store->archive, shown);
      return NULL;
    }
  stream = g_object_new (AIRLOCK_TYPE_ARCHIVE_ENTRY_STREAM, NULL);
  stream->archive = g_steal_pointer (&a);
  stream->path = g_strdup (path);
  *ret_size = entry->size;
  return G_INPUT_STREAM (stream);
}

static GInputStream *
open_dir_file (AirlockBlobStore *store, const char *path, guint64 *ret_size, GError **error)
{
  g_autofree char *normalized = normalize_path (path);
  g_autofree char *full = NULL;
  g_autoptr (GFile) file = NULL;
  g_autoptr (GFileInputStream) stream = NULL;
  g_autoptr (GFileInfo) info = NULL;
  g_autoptr (GError) local = NULL;

  /* @path is escaped like in an archive, though a directory store is only
   * asked for index.json and blobs/sha256/<checked hex>: so @full, the
   * user's directory and such a path, is shown as it is. */
  if (!normalized || !g_file_test ((full = g_build_filename (store->dir, normalized, NULL)),
                                   G_FILE_TEST_EXISTS))
    {
      g_autofree char *shown = airlock_image_printable (path);

      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_NOT_FOUND,
                   "there is no file '%s' in '%s'", shown, store->dir);
      return NULL;
    }
  /* Not a fifo or a device: opening one could block or never end. */
  if (!g_file_test (full, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "'%s' is not a regular file", full);
      return NULL;
    }
  file = g_file_new_for_path (full);
  stream = g_file_read (file, NULL, &local);
  if (stream)
    info = g_file_input_stream_query_info (stream, G_FILE_ATTRIBUTE_STANDARD_SIZE ","
                                           G_FILE_ATTRIBUTE_STANDARD_TYPE, NULL, &local);
  if (!info)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR,
                   g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND)
                     ? AIRLOCK_IMAGE_ERROR_NOT_FOUND : AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "cannot read '%s': %s", full, local->message);
      return NULL;
    }
  if (g_file_info_get_file_type (info) != G_FILE_TYPE_REGULAR)
    {
      g_set_error (error, AIRLOCK_IMAGE_ERROR, AIRLOCK_IMAGE_ERROR_MALFORMED,
                   "'%s' is not a regular file", full);
      return NULL;
    }
  *ret_size = g_file_info_get_size (info);
  return G_INPUT_STREAM (g_steal_pointer (&stream));
}

GInputStream *
airlock_blob_store_open (AirlockBlobStore *store, const char *path, guint64 *ret_size,
                         GError **error)
{
  return store->entries ? open_archive_entry (store, path, ret_size, error)
                        : open_dir_file (store, path, ret_size, error);
}
