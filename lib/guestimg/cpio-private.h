/* A reproducible newc ("070701") cpio writer for the initramfs.
 *
 * The same entries give the same bytes whatever order they were added in and
 * whatever the files' metadata on the host: entries are sorted by path, every
 * parent directory is listed (mode 0755 unless added with another), mtime/
 * uid/gid/device numbers are 0 and inode numbers are assigned in archive
 * order. */
#pragma once

#include "airlock-macros.h"

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _AirlockCpio AirlockCpio;

AirlockCpio *airlock_cpio_new (void);
void airlock_cpio_free (AirlockCpio *cpio);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockCpio, airlock_cpio_free)

/* Adds a regular file at @path (relative, normalised: "lib/modules/x.ko";
 * no leading '/', no "." or ".." components) with permission bits @mode
 * (0755, 0644) and contents @data (a reference is taken).  Returns FALSE with
 * AIRLOCK_GUEST_IMAGE_ERROR_FAILED when the path is invalid, already added, or
 * a directory of another entry. */
gboolean airlock_cpio_add_bytes (AirlockCpio *cpio, const char *path, guint mode,
                                 GBytes *data, GError **error);

/* As airlock_cpio_add_bytes(), with the contents of the host file @source
 * (mapped, read when the archive is written). */
gboolean airlock_cpio_add_file (AirlockCpio *cpio, const char *path, guint mode,
                                const char *source, GError **error);

/* Adds a symbolic link at @path (normalised as above) pointing to @target
 * (stored as given: "testprog", "../lib/x"; not checked, it is resolved in
 * the guest).  Fails like airlock_cpio_add_bytes(), or for an empty target. */
gboolean airlock_cpio_add_symlink (AirlockCpio *cpio, const char *path, const char *target,
                                   GError **error);

/* Adds a directory at @path with permission bits @mode (07777 bits: 01777
 * for a sticky, world-writable /tmp); it is listed even when empty.  A
 * directory that is only a parent of other entries needs no call.  Fails
 * like airlock_cpio_add_bytes(). */
gboolean airlock_cpio_add_directory (AirlockCpio *cpio, const char *path, guint mode,
                                     GError **error);

/* Number of entries the archive will have, directories included (the
 * trailer excluded). */
guint airlock_cpio_n_entries (AirlockCpio *cpio);

/* Writes the archive.  @progress, when non-NULL, is called with entries
 * written so far and the total.  On failure the stream is left part-written. */
gboolean airlock_cpio_write (AirlockCpio *cpio, GOutputStream *out,
                             void (*progress) (guint done, guint total, gpointer user_data),
                             gpointer user_data, GError **error);

G_END_DECLS
