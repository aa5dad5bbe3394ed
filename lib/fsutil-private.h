/* Small file-system helpers shared by the library areas (internal). */
#pragma once

#include <glib.h>

/* Removes @path recursively, never following a symlink (each directory is
 * opened with O_NOFOLLOW relative to its parent).  Best effort. */
void airlock_rm_rf (const char *path);

/* Reads the regular file @path (never through a symlink) when it holds at
 * most @max bytes.  Its size is checked before any byte is read, so a file
 * over the bound costs nothing to refuse; then it is read in pieces, never
 * more than @max bytes, and a file that grows past @max meanwhile is
 * refused too.  Returns NULL with @error set (G_IO_ERROR_MESSAGE_TOO_LARGE
 * over the bound, G_IO_ERROR_NOT_REGULAR_FILE, or the errno of open/read).
 * Transfer full. */
GBytes *airlock_read_file_bounded (const char *path, gsize max, GError **error);

/* Reads @name in @dirfd for a reader of files someone else wrote (a bundle
 * from anywhere): a regular file, never through a symlink, never waiting on
 * a FIFO, at most @max bytes — or, with @tail, its last @max bytes.
 * @ret_size (may be NULL) gets the whole file's size.  Returns the bytes
 * (a NUL follows them, not counted), or NULL with errno set (ENOENT: there
 * is no such file) and *@ret_why (transfer full) saying why in words after
 * the file's name: "is not a regular file", "is N bytes, over the M
 * @reader reads" (@reader: "show", "verify"), "cannot be read: …". */
GBytes *airlock_read_at_bounded (int dirfd, const char *name, gsize max, gboolean tail,
                                 const char *reader, guint64 *ret_size, char **ret_why);

/* Writes all @len bytes of @data to @fd, again after EINTR.  Returns FALSE
 * with errno set (EIO for a write that took nothing). */
gboolean airlock_write_all (int fd, const void *data, gsize len);

/* Makes @path (and its missing parents, at @mode) inside airlock's cache
 * @cache_root, making the root itself first at 0755 when it is missing: the
 * first directory anything makes in a fresh cache decides its root's mode,
 * and QEMU run by a system libvirtd (as libvirt-qemu) must reach the guest
 * images under it.  Returns 0, or -1 with errno set. */
int airlock_cache_mkdir (const char *cache_root, const char *path, int mode);
