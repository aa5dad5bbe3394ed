/* Debian packages (the guest kernel, the testroot's strace): download through
 * apt, verify against the pin,
 * extract what the guest image needs; and depmod over a modules tree. */
#pragma once

#include "airlock-macros.h"
#include "arch.h"
#include "paths.h"
#include "guestimg/recipe-private.h"

#include <glib.h>

G_BEGIN_DECLS

/* The file name Debian's pool gives the package: "pkg_1.2-3_amd64.deb"
 * (an epoch's ':' spelled "%3a"). */
char *airlock_kernel_pin_deb_name (const AirlockKernelPin *pin, AirlockArch arch);

/* Returns the path of @pin's .deb in @downloads_dir, downloading it with
 * `apt-get download` when it is absent or does not match the pin (once: a
 * second mismatch is an error).  A file put there by hand is used when it
 * matches.  Errors: AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE (apt-get failed:
 * the message names package and version and says how to fix it),
 * AIRLOCK_GUEST_IMAGE_ERROR_DIGEST (the download does not match the pin),
 * AIRLOCK_GUEST_IMAGE_ERROR_FAILED (I/O). */
char *airlock_kernel_pin_fetch (const AirlockKernelPin *pin, AirlockArch arch,
                                const char *downloads_dir, AirlockProgressFunc progress,
                                gpointer progress_data, GError **error);

typedef struct {
  char *release;       /* "6.1.0-50-amd64" */
  char *kernel;        /* "boot/vmlinuz-<release>" */
  char *modules_dir;   /* "lib/modules/<release>", or "usr/lib/modules/<release>" (merged /usr) */
} AirlockDebKernelLayout;

void airlock_deb_kernel_layout_free (AirlockDebKernelLayout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockDebKernelLayout, airlock_deb_kernel_layout_free)

/* Where the kernel package @deb keeps its kernel and modules, read from its
 * md5sums control file: milliseconds, where listing the data would mean
 * decompressing all of it.  @what names the package in messages.  NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_KERNEL_FORMAT when it has no single kernel with
 * modules of the same release. */
AirlockDebKernelLayout *airlock_deb_kernel_layout (const char *deb, const char *what,
                                                   GError **error);

/* Extracts @members (paths as dpkg-deb lists them, "./boot/…"; a directory
 * brings what is below it) of @deb into @dest, which must exist. */
gboolean airlock_deb_extract (const char *deb, const char *dest, const char *const *members,
                              const char *what, GError **error);

/* Runs `depmod -n` over @root/lib/modules/@release with an empty
 * configuration (so the host's depmod.d cannot change the result) and
 * returns what it prints: modules.dep first, then the other index files.
 * Nothing is written to @root. */
char *airlock_depmod_show (const char *root, const char *release, GError **error);

/* "kmod version 30", or NULL if depmod cannot say. */
char *airlock_depmod_version (void);

G_END_DECLS
