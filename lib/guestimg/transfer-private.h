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


G_END_DECLS
