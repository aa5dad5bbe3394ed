/* The internal toolbox's content-addressed cache directory: what every
 * cache of built things in airlock does the same way — the rootfs disks
 * (lib/image/disk.c: <cache>/image/<key>/), the guest images and their
 * kernel stages and initramfs variants (lib/guestimg: <cache>/guest/<arch>/
 * <key>/), and an import of exported guest images (transfer.c).  The one
 * place these are written (the house issue: disk.c and guest-image.c had
 * twins of each).
 *
 * The protocol, for a directory @dir of entries:
 *   - builders and checkers hold a flock on @dir/.lock (airlock_cache_lock);
 *   - whoever holds it is the only builder, so a build left in @dir under a
 *     scratch name (.build-*, .old-*) is abandoned (airlock_cache_remove_stale);
 *   - a build is made under a scratch name in @dir, on the entry's file
 *     system, and moved into place in one step (airlock_cache_install), so a
 *     reader sees the old entry or the new one, never a mix;
 *   - an entry's manifest is written last: its mtime vouches for the files
 *     written before it (airlock_cache_manifest_*).
 *
 * Errors are set in the caller's domain (AirlockCacheDir), so a caller's
 * users keep matching on its codes. */
#pragma once

#include "paths.h"

#include <json-glib/json-glib.h>
#include <sys/stat.h>

G_BEGIN_DECLS

#define AIRLOCK_CACHE_LOCK_FILE ".lock"
#define AIRLOCK_CACHE_BUILD_PREFIX ".build-"
#define AIRLOCK_CACHE_OLD_PREFIX ".old-"

/* A directory of cache entries and how to talk about it. */
typedef struct {
  const char *dir;
  GQuark error_domain; /* errors are set in it, with error_code */
  int error_code;
  AirlockProgressFunc progress; /* may be NULL */
  gpointer progress_data;
} AirlockCacheDir;

/* progress (@stage, @done, @total) when there is a progress function. */
void airlock_cache_report (const AirlockCacheDir *cd, const char *stage, guint64 done,
                           guint64 total);

/* Sets "cannot @action '@path': <strerror (@errsv)>" in @cd's domain.
 * Returns FALSE. */
gboolean airlock_cache_set_io_error (const AirlockCacheDir *cd, GError **error, int errsv,
                                     const char *action, const char *path);

/* Serialises everyone who checks or builds in @cd->dir: an exclusive flock
 * on its .lock (created 0644).  When another holds it, reports @wait_stage
 * (progress 0/0) and waits.  Returns the locked fd (closing it unlocks), or
 * -1 with @error set. */
int airlock_cache_lock (const AirlockCacheDir *cd, const char *wait_stage, GError **error);

/* Leftovers of builders that died: removes every .build-* and .old-* in
 * @cd->dir (files or trees).  Call with the lock held.  Best effort. */
void airlock_cache_remove_stale (const AirlockCacheDir *cd);

/* A new scratch build in @cd->dir: an empty directory (0755) or, without
 * @directory, an empty file (0644, opened and closed).  @what names it in
 * the error ("cannot create @what in '@dir'").  Transfer full; NULL with
 * @error set. */
char *airlock_cache_new_build (const AirlockCacheDir *cd, gboolean directory, const char *what,
                               GError **error);

/* Moves the finished build @tmp to @dest in one step: a reader sees the old
 * entry or the new one.  A directory over an existing one (--force) is
 * swapped with it (or, where the file system cannot, the old one is moved
 * aside to .old-* in @cd->dir first) and the old one removed.  @what names
 * the entry in errors ("cannot move the new @what to '@dest'"). */
gboolean airlock_cache_install (const AirlockCacheDir *cd, const char *tmp, const char *dest,
                                const char *what, GError **error);

/* Reads an entry's manifest @path (bounded, depth-checked JSON; never
 * trusted).  Returns its root node, an object; NULL with @error set:
 * G_IO_ERROR_NOT_FOUND when there is no manifest, else why it cannot be
 * read (json-glib's reason, the bound, or "not a JSON object").
 * @ret_st, when given, gets the manifest's lstat(). */
JsonNode *airlock_cache_manifest_read (const char *path, struct stat *ret_st, GError **error);

/* Whether @root's "builder" and "key" strings are @builder and @key: a
 * manifest for other inputs describes another entry. */
gboolean airlock_cache_manifest_matches (JsonObject *root, const char *builder, const char *key);

/* A cache lookup's read of the manifest @path, called @name in reasons
 * ("manifest", "kernel.json"): read and matched to @builder and @key.
 * Returns its root node (an object); NULL with the reason in @ret_why
 * (never an error: whatever is wrong, the answer is to build):
 * @absent_why when there is none ("not built yet"), "its @name cannot be
 * read: …", or "its @name is for other inputs". */
JsonNode *airlock_cache_manifest_lookup (const char *path, const char *name, const char *builder,
                                         const char *key, const char *absent_why,
                                         struct stat *ret_st, char **ret_why);

/* Whether a file of the entry (@st) was modified after its manifest
 * (@manifest_st) was written: then the manifest does not describe it. */
gboolean airlock_cache_modified_after (const struct stat *st, const struct stat *manifest_st);

/* Checks the entry's file @dir/@file against its manifest's record, the
 * way every cache lookup does (hashing each output on every lookup would
 * cost too much: a damaged or edited file changes what is checked here):
 * a regular file (not through a symlink) of @size bytes, not modified
 * after the manifest (@manifest_st) was written.  FALSE with the reason in
 * @ret_why: "'@file' is missing", "'@file' is N bytes, the manifest says
 * M", or "'@file' was modified after it was built". */
gboolean airlock_cache_check_file (const char *dir, const char *file, gint64 size,
                                   const struct stat *manifest_st, char **ret_why);

/* Writes the document of @b to @path as pretty JSON (two-space indent, no
 * final newline), with @flags, at 0644. */
gboolean airlock_cache_manifest_write (JsonBuilder *b, const char *path,
                                       GFileSetContentsFlags flags, GError **error);

G_END_DECLS
