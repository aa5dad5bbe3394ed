/* Guest images carried between caches: `airlock images export FILE` writes
 * the built guest images of this airlock (per arch: the image, and its
 * testroot and static-shell variants when they are built) to a tar archive
 * with an index of every file's size and SHA-256; `airlock images import
 * FILE` checks every file against that index and installs them, so a
 * pipeline builds the images once and pins them. */
#pragma once

#include "airlock-macros.h"
#include "arch.h"
#include "paths.h"
#include "guestimg/guest-image.h"

#include <glib.h>

G_BEGIN_DECLS

/* The archive's first member: what it holds, with every file's digest. */
#define AIRLOCK_GUEST_EXPORT_INDEX "airlock-guest-images.json"
#define AIRLOCK_GUEST_EXPORT_FORMAT "airlock-guest-images/1"

/* Writes the guest images cached for @options (cache_dir, and kernel_path
 * with modules_dir for a custom kernel; as `airlock images build` takes
 * them) for the arches set in @arches (indexed by AirlockArch) to @file,
 * replaced in one step.
 * Each arch's image must be built (AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT
 * naming it otherwise); its variants go along when they are.  Returns the
 * exported cache directories ("guest/amd64/<key>", …) in @ret_dirs. */
gboolean airlock_guest_images_export (const AirlockGuestImageOptions *options, const gboolean *arches,
                                      const char *file, GPtrArray **ret_dirs, GError **error);

/* Checks and installs the archive @file into @cache_dir (NULL: the
 * default): its index first, then every member against it (a path it does
 * not list, a second copy, a wrong size or SHA-256 is refused, naming the
 * member and both digests: AIRLOCK_GUEST_IMAGE_ERROR_DIGEST), all of it in
 * a scratch directory; only when every file checks out are the directories
 * moved into the cache, each in one step under its arch's lock.  Returns
 * the installed directories in @ret_dirs. */
gboolean airlock_guest_images_import (const char *cache_dir, const char *file,
                                      GPtrArray **ret_dirs, GError **error);

G_END_DECLS
