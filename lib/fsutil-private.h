/* Small file-system helpers shared by the library areas (internal). */
#pragma once

#include <glib.h>

/* Removes @path recursively, never following a symlink (each directory is
 * opened with O_NOFOLLOW relative to its parent).  Best effort. */
void airlock_rm_rf (const char *path);
