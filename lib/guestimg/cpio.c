/* The newc writer behind cpio-private.h.  Hand-written, not libarchive
 * (already a dependency: transfer.c, lib/image), for a reason measured
 * (house issue, December 2026):
 *
 * What airlock needs of its initramfs writer is mostly policy libarchive
 * does not have: normalised relative paths, every parent directory listed,
 * entries sorted by path, inode numbers in archive order, mtime, uid, gid
 * and devices 0 (sorted_entries() and add_entry() below).  Only the
 * serialisation (write_entry(), write_padding(): ~45 lines) is what
 * libarchive's newc writer would replace.  Replaced by it, with every
 * field set as here (size set for directories and symlinks too, or it
 * refuses them; bytes_per_block 0, so the archive ends at its trailer),
 * the file grew from 301 to 330 lines (the stream sink and its errors),
 * and the archive was not the same: libarchive writes the header's hex in
 * lower case, ours in upper case.  Over a kernel stage (21 modules and
 * indexes, 69 MB, 50 entries with the directories, a symlink and a sticky
 * directory) the two archives had the same length and differed in 131
 * bytes, every one a hex digit's case.  The kernel reads either, but an
 * initramfs is content-addressed: its SHA-256 keys the testroot and shell
 * variants, and equal inputs must give equal bytes (manifest-private.h),
 * so the switch would need a builder bump and a rebuild of every cached
 * guest image and kernel stage, for no line saved.  Speed was no reason
 * either way (0.19 s against 0.20 s for those 69 MB, 5 runs each). */
#include "config.h"

#include "guestimg/cpio-private.h"

#include "guestimg/guest-image.h"

#include <string.h>
#include <sys/stat.h>

/* newc fields are 8 hex digits: sizes must fit 32 bits. */
#define NEWC_MAX_FILE_SIZE G_MAXUINT32
#define NEWC_HEADER_SIZE 110

typedef struct {
  char *path;
  guint32 mode;   /* full st_mode: type and permission bits */
  GBytes *data;   /* regular files given as bytes; a symlink's target */
  char *source;   /* regular files given as a host path */
} CpioEntry;

struct _AirlockCpio {
  GHashTable *entries;   /* path → CpioEntry: what was added (parents are implied) */
};

static void
cpio_entry_free (gpointer p)
{
  CpioEntry *e = p;

  g_free (e->path);
  g_clear_pointer (&e->data, g_bytes_unref);
  g_free (e->source);
  g_free (e);
}

AirlockCpio *
airlock_cpio_new (void)
{
  AirlockCpio *cpio = g_new0 (AirlockCpio, 1);

  cpio->entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, cpio_entry_free);
  return cpio;
}

void
airlock_cpio_free (AirlockCpio *cpio)
{
  if (!cpio)
    return;
  g_hash_table_unref (cpio->entries);
  g_free (cpio);
}

/* Paths become names in the guest's root filesystem: one spelling per file,
 * so two spellings cannot make two entries for one file, and nothing can
 * climb out of the root. */
static gboolean
path_is_normalised (const char *path)
{
  const char *p = path;

  if (*p == '\0' || *p == '/')
    return FALSE;
  while (*p)
    {
      const char *slash = strchr (p, '/');
      gsize len = slash ? (gsize) (slash - p) : strlen (p);

      if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
        return FALSE;
      if (!slash)
        break;
      p = slash + 1;
      if (*p == '\0')
        return FALSE;   /* trailing slash */
    }
  return TRUE;
}

/* @mode is a full st_mode: the file type and the permission bits. */
static gboolean
add_entry (AirlockCpio *cpio, const char *path, guint mode, GBytes *data, const char *source,
           GError **error)
{
  CpioEntry *e;

  if (!path_is_normalised (path))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot add '%s' to the initramfs: not a relative normalised path", path);
      return FALSE;
    }
  if (g_hash_table_contains (cpio->entries, path))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot add '%s' to the initramfs: it is already there", path);
      return FALSE;
    }
  e = g_new0 (CpioEntry, 1);
  e->path = g_strdup (path);
  e->mode = mode;
  e->data = data ? g_bytes_ref (data) : NULL;
  e->source = g_strdup (source);
  g_hash_table_insert (cpio->entries, e->path, e);
  return TRUE;
}

gboolean
airlock_cpio_add_bytes (AirlockCpio *cpio, const char *path, guint mode, GBytes *data,
                        GError **error)
{
  g_return_val_if_fail (cpio != NULL && path != NULL && data != NULL, FALSE);
  return add_entry (cpio, path, S_IFREG | (mode & 07777), data, NULL, error);
}

gboolean
airlock_cpio_add_file (AirlockCpio *cpio, const char *path, guint mode, const char *source,
                       GError **error)
{
  g_return_val_if_fail (cpio != NULL && path != NULL && source != NULL, FALSE);
  return add_entry (cpio, path, S_IFREG | (mode & 07777), NULL, source, error);
}

gboolean
airlock_cpio_add_symlink (AirlockCpio *cpio, const char *path, const char *target, GError **error)
{
  g_autoptr (GBytes) data = NULL;

  g_return_val_if_fail (cpio != NULL && path != NULL && target != NULL, FALSE);
  if (*target == '\0')
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot add '%s' to the initramfs: a symlink needs a target", path);
      return FALSE;
    }
  /* newc stores a symlink's target as its data, without a NUL. */
  data = g_bytes_new (target, strlen (target));
  return add_entry (cpio, path, S_IFLNK | 0777, data, NULL, error);
}

gboolean
airlock_cpio_add_directory (AirlockCpio *cpio, const char *path, guint mode, GError **error)
{
  g_return_val_if_fail (cpio != NULL && path != NULL, FALSE);
  return add_entry (cpio, path, S_IFDIR | (mode & 07777), NULL, NULL, error);
}

static int
compare_entry_paths (gconstpointer a, gconstpointer b)
{
  const CpioEntry *ea = *(CpioEntry *const *) a;
  const CpioEntry *eb = *(CpioEntry *const *) b;

  return strcmp (ea->path, eb->path);
}

/* All entries, parents included, sorted by path.  Byte order puts every
 * directory before what it contains ("lib" < "lib/…"), which the kernel's
 * unpacker needs: it creates entries in archive order.  The directory
 * entries are owned by @ret_dirs. */
static GPtrArray *
sorted_entries (AirlockCpio *cpio, GPtrArray **ret_dirs, GError **error)
{
  g_autoptr (GPtrArray) all = g_ptr_array_new ();
  g_autoptr (GPtrArray) dirs = g_ptr_array_new_with_free_func (cpio_entry_free);
  g_autoptr (GHashTable) dir_paths = g_hash_table_new (g_str_hash, g_str_equal);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, cpio->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      CpioEntry *e = value;
      const char *slash;

      g_ptr_array_add (all, e);
      for (slash = strchr (e->path, '/'); slash; slash = strchr (slash + 1, '/'))
        {
          g_autofree char *dir = g_strndup (e->path, slash - e->path);
          CpioEntry *d;
          CpioEntry *added = g_hash_table_lookup (cpio->entries, dir);

          if (added && S_ISDIR (added->mode))
            continue;   /* added with its own mode: listed once, as added */
          if (added)
            {
              g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                           "cannot add '%s' to the initramfs: '%s' is not a directory",
                           e->path, dir);
              return NULL;
            }
          if (g_hash_table_contains (dir_paths, dir))
            continue;
          d = g_new0 (CpioEntry, 1);
          d->path = g_steal_pointer (&dir);
          d->mode = S_IFDIR | 0755;
          g_ptr_array_add (dirs, d);
          g_hash_table_add (dir_paths, d->path);
          g_ptr_array_add (all, d);
        }
    }
  g_ptr_array_sort (all, compare_entry_paths);
  *ret_dirs = g_steal_pointer (&dirs);
  return g_steal_pointer (&all);
}

guint
airlock_cpio_n_entries (AirlockCpio *cpio)
{
  g_autoptr (GPtrArray) dirs = NULL;
  g_autoptr (GPtrArray) all = sorted_entries (cpio, &dirs, NULL);

  return all ? all->len : 0;
}

static gboolean
write_padding (GOutputStream *out, gsize written, GError **error)
{
  static const guint8 zeros[4] = { 0 };
  gsize pad = (4 - (written % 4)) % 4;

  return pad == 0 || g_output_stream_write_all (out, zeros, pad, NULL, NULL, error);
}

/* One entry: header, NUL-terminated name padded so the data starts on a
 * 4-byte boundary, then the data padded likewise.  Every entry starts
 * aligned, so padding is computed from the entry's own length. */
static gboolean
write_entry (GOutputStream *out, guint32 ino, guint32 mode, guint32 nlink, const char *name,
             const guint8 *data, gsize size, GError **error)
{
  char header[NEWC_HEADER_SIZE + 1];
  gsize namesize = strlen (name) + 1;

  /* mtime, uid, gid and device numbers are 0 on purpose: the host's values
   * would make the bytes depend on who built the image, and when. */
  g_snprintf (header, sizeof header,
              "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
              ino, mode, 0u, 0u, nlink, 0u, (guint32) size, 0u, 0u, 0u, 0u,
              (guint32) namesize, 0u);
  if (!g_output_stream_write_all (out, header, NEWC_HEADER_SIZE, NULL, NULL, error)
      || !g_output_stream_write_all (out, name, namesize, NULL, NULL, error)
      || !write_padding (out, NEWC_HEADER_SIZE + namesize, error))
    return FALSE;
  if (size > 0
      && (!g_output_stream_write_all (out, data, size, NULL, NULL, error)
          || !write_padding (out, size, error)))
    return FALSE;
  return TRUE;
}

gboolean
airlock_cpio_write (AirlockCpio *cpio, GOutputStream *out,
                    void (*progress) (guint done, guint total, gpointer user_data),
                    gpointer user_data, GError **error)
{
  g_autoptr (GPtrArray) dirs = NULL;
  g_autoptr (GPtrArray) all = NULL;

  g_return_val_if_fail (cpio != NULL && G_IS_OUTPUT_STREAM (out), FALSE);

  all = sorted_entries (cpio, &dirs, error);
  if (!all)
    return FALSE;
  for (guint i = 0; i < all->len; i++)
    {
      CpioEntry *e = all->pdata[i];
      g_autoptr (GMappedFile) mapped = NULL;
      const guint8 *data = NULL;
      gsize size = 0;

      if (e->data)
        data = g_bytes_get_data (e->data, &size);
      else if (e->source)
        {
          mapped = g_mapped_file_new (e->source, FALSE, error);
          if (!mapped)
            {
              g_prefix_error (error, "cannot add '%s' to the initramfs: ", e->path);
              return FALSE;
            }
          data = (const guint8 *) g_mapped_file_get_contents (mapped);
          size = g_mapped_file_get_length (mapped);
        }
      if (size > NEWC_MAX_FILE_SIZE)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "cannot add '%s' to the initramfs: %" G_GSIZE_FORMAT
                       " bytes is more than a newc archive can hold", e->path, size);
          return FALSE;
        }
      /* Inode numbers only have to be distinct (the unpacker uses them to
       * find hard links); numbering in archive order makes them stable. */
      if (!write_entry (out, i + 1, e->mode, S_ISDIR (e->mode) ? 2 : 1, e->path, data, size,
                        error))
        return FALSE;
      if (progress)
        progress (i + 1, all->len, user_data);
    }
  return write_entry (out, 0, 0, 1, "TRAILER!!!", NULL, 0, error);
}
