#include "config.h"

#include "fsutil-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes @name under @dirfd and everything below it, without following
 * symlinks (a custom modules tree links to kernel sources we must not touch;
 * a run directory's contents are written by QEMU).  Best effort: what cannot
 * be removed stays. */
static void
rm_rf_at (int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *dir;
  struct dirent *entry;

  if (fd < 0)
    {
      unlinkat (dirfd, name, 0);
      return;
    }
  dir = fdopendir (fd);
  if (!dir)
    {
      close (fd);
      return;
    }
  while ((entry = readdir (dir)))
    {
      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (entry->d_type == DT_DIR
          || (unlinkat (fd, entry->d_name, 0) < 0 && errno == EISDIR))
        rm_rf_at (fd, entry->d_name);
    }
  closedir (dir);
  unlinkat (dirfd, name, AT_REMOVEDIR);
}

void
airlock_rm_rf (const char *path)
{
  rm_rf_at (AT_FDCWD, path);
}


GBytes *
airlock_read_file_bounded (const char *path, gsize max, GError **error)
{
  /* O_NONBLOCK: a FIFO where a file should be must not hold us until
   * someone writes it (fstat then refuses it). */
  int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  g_autofree guint8 *buf = NULL;
  gsize len = 0, size;
  int saved;

  if (fd < 0)
    {
      saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot open '%s': %s",
                   path, g_strerror (saved));
      return NULL;
    }
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "cannot read '%s': it is not a regular file", path);
      close (fd);
      return NULL;
    }
  if ((guint64) st.st_size > max)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                   "cannot read '%s': it is %" G_GUINT64_FORMAT " bytes, over the bound of %"
                   G_GSIZE_FORMAT, path, (guint64) st.st_size, max);
      close (fd);
      return NULL;
    }
  /* One byte more than the file had, to see it grow (it must not: its
   * writer is gone). */
  size = (gsize) st.st_size + 1;
  buf = g_malloc (size);
  for (;;)
    {
      ssize_t n = read (fd, buf + len, MIN (size - len, (gsize) 1 << 20));

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "cannot read '%s': %s",
                       path, g_strerror (saved));
          close (fd);
          return NULL;
        }
      if (n == 0)
        break;
      len += (gsize) n;
      if (len == size)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                       "cannot read '%s': it grew past its %" G_GUINT64_FORMAT " bytes while "
                       "being read", path, (guint64) st.st_size);
          close (fd);
          return NULL;
        }
    }
  close (fd);
  return g_bytes_new_take (g_steal_pointer (&buf), len);
}

int
airlock_cache_mkdir (const char *cache_root, const char *path, int mode)
{
  if (cache_root && g_mkdir_with_parents (cache_root, 0755) < 0)
    return -1;
  return g_mkdir_with_parents (path, mode);
}

GBytes *
airlock_read_at_bounded (int dirfd, const char *name, gsize max, gboolean tail,
                         const char *reader, guint64 *ret_size, char **ret_why)
{
  int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  struct stat st;
  guint8 *buf;
  gsize want, off = 0;
  int saved;

  *ret_why = NULL;
  if (fd < 0)
    {
      saved = errno;
      if (saved == ENOENT)
        *ret_why = g_strdup ("is missing");
      else
        *ret_why = g_strdup_printf ("cannot be opened: %s", g_strerror (saved));
      errno = saved;
      return NULL;
    }
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      *ret_why = g_strdup ("is not a regular file");
      close (fd);
      errno = EINVAL;
      return NULL;
    }
  if (ret_size)
    *ret_size = (guint64) st.st_size;
  if ((guint64) st.st_size > max && !tail)
    {
      *ret_why = g_strdup_printf ("is %" G_GUINT64_FORMAT " bytes, over the %" G_GSIZE_FORMAT
                                  " %s reads", (guint64) st.st_size, max, reader);
      close (fd);
      errno = EFBIG;
      return NULL;
    }
  want = (gsize) MIN ((guint64) st.st_size, (guint64) max);
  if (tail && lseek (fd, (off_t) st.st_size - (off_t) want, SEEK_SET) < 0)
    {
      saved = errno;
      *ret_why = g_strdup_printf ("cannot be read: %s", g_strerror (saved));
      close (fd);
      errno = saved;
      return NULL;
    }
  buf = g_malloc (want + 1);
  while (off < want)
    {
      ssize_t n = read (fd, buf + off, want - off);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          saved = errno;
          *ret_why = g_strdup_printf ("cannot be read: %s", g_strerror (saved));
          g_free (buf);
          close (fd);
          errno = saved;
          return NULL;
        }
      if (n == 0)
        break;
      off += (gsize) n;
    }
  close (fd);
  buf[off] = '\0';
  return g_bytes_new_take (buf, off);
}

gboolean
airlock_write_all (int fd, const void *data, gsize len)
{
  const guint8 *p = data;

  while (len > 0)
    {
      ssize_t n = write (fd, p, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = EIO;
          return FALSE;
        }
      p += n;
      len -= (gsize) n;
    }
  return TRUE;
}
