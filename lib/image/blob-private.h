/* Where an image's files are: an OCI layout directory, or a tar archive
 * (oci-archive, docker-archive) read in place.  Paths are relative,
 * '/'-separated, as the layout or manifest.json names them. */
#pragma once

#include "image.h"

G_BEGIN_DECLS

typedef struct _AirlockBlobStore AirlockBlobStore;

/* Opens a directory store.  Fails (AIRLOCK_IMAGE_ERROR_REFERENCE) when @dir
 * is not a directory. */
AirlockBlobStore *airlock_blob_store_new_dir (const char *dir, GError **error);

/* Opens an archive store: scans @file's tar headers once, indexing regular
 * files (and links to them) by path; no entry data is read or written
 * anywhere.  Fails with REFERENCE (no such file), MALFORMED (not a tar,
 * damaged, a path that appears twice) or LIMIT (too many entries). */
AirlockBlobStore *airlock_blob_store_new_archive (const char *file, GError **error);

void airlock_blob_store_free (AirlockBlobStore *store);

/* Whether @path names a regular file of the store. */
gboolean airlock_blob_store_has (AirlockBlobStore *store, const char *path);

/* The stored size of the regular file at @path, without reading it; FALSE
 * (NOT_FOUND) when absent. */
gboolean airlock_blob_store_size (AirlockBlobStore *store, const char *path, guint64 *ret_size,
                                  GError **error);

/* Opens @path for reading and sets @ret_size to its stored size.  Fails
 * with NOT_FOUND (absent), MALFORMED (not a regular file; for an archive,
 * a cut-short archive shows at the read that reaches the missing bytes).
 * Messages name the path, not the image: callers prefix them. */
GInputStream *airlock_blob_store_open (AirlockBlobStore *store, const char *path,
                                       guint64 *ret_size, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockBlobStore, airlock_blob_store_free)

G_END_DECLS
