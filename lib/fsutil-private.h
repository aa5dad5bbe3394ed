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

/* Makes @path (and its missing parents, at @mode) inside airlock's cache
 * @cache_root, making the root itself first at 0755 when it is missing: the
 * first directory anything makes in a fresh cache decides its root's mode,
 * and QEMU run by a system libvirtd (as libvirt-qemu) must reach the guest
 * images under it.  Returns 0, or -1 with errno set. */
int airlock_cache_mkdir (const char *cache_root, const char *path, int mode);
