/* libairlock: prove whether a container image reaches for the network.
 * The one header to include, as installed: ${includedir}/airlock-1/airlock.h,
 * the directory pkg-config's Cflags names.  Beside it there is only the
 * airlock/ directory (the umbrella header, lib/airlock.h, and the areas'
 * headers in the tree's layout), so no header of ours can hide a system one
 * of the same name: <paths.h> stays glibc's.  In the tree, <airlock.h> is
 * lib/airlock.h itself. */
#pragma once

#include "airlock/airlock.h"
