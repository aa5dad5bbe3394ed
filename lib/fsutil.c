#include "config.h"

#include "fsutil-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
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

