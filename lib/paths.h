/* Where airlock finds its own files and keeps its caches. */
#pragma once

#include "airlock-macros.h"

G_BEGIN_DECLS

/* Progress of long work: @stage names it ("download linux-image-…"), @done and
 * @total count its units (bytes, files; @total 0 when unknown). */
typedef void (*AirlockProgressFunc) (const char *stage, guint64 done, guint64 total,
                                     gpointer user_data);

/* The cache root: $AIRLOCK_CACHE_DIR (made absolute against the working
 * directory), else $XDG_CACHE_HOME/airlock.  Returns a newly allocated
 * path; the directory may not exist yet. */
AIRLOCK_PUBLIC char *airlock_default_cache_dir (void);

/* Directory of the static guest programs (init-amd64, …):
 * $AIRLOCK_GUEST_DIR, else the installed libexecdir/airlock.  Static string. */
AIRLOCK_PUBLIC const char *airlock_guest_programs_dir (void);

/* Directory of the guest image recipe (kernels.ini, modules.list):
 * $AIRLOCK_DATA_DIR, else the installed datadir/airlock.  Static string. */
AIRLOCK_PUBLIC const char *airlock_data_dir (void);

/* Hex SHA-256 of a file, streaming.  Returns NULL with @error set when the
 * file cannot be read. */
AIRLOCK_PUBLIC char *airlock_sha256_file (const char *path, GError **error);

G_END_DECLS
