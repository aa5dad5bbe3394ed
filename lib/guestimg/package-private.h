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

/* Where a pinned package may be fetched from besides the apt archive.
 * NULL members take their environment variable. */
typedef struct {
  const char *local_dir;     /* a directory holding the .deb under its pool name;
                              * NULL: $AIRLOCK_KERNEL_DIR (unset: not used) */
  const char *snapshot_url;  /* snapshot.debian.org or a mirror of its layout; NULL:
                              * $AIRLOCK_SNAPSHOT_URL, else https://snapshot.debian.org;
                              * "": not used */
} AirlockPinSources;

#define AIRLOCK_SNAPSHOT_DEFAULT_URL "https://snapshot.debian.org"

/* The snapshot archive's machine-readable list of @pin's builds
 * (".../mr/binary/PACKAGE/VERSION/binfiles": each arch's file hash), and
 * the URL of a file by that hash (".../file/SHA1"). */
char *airlock_snapshot_binfiles_url (const char *base, const AirlockKernelPin *pin);
char *airlock_snapshot_file_url (const char *base, const char *hash);

/* Returns the path of @pin's .deb in @downloads_dir.  A file already there
 * is used when it matches the pin (else it is removed); otherwise the
 * sources are tried in order: `apt-get download` (the archive apt knows),
 * the snapshot archive (by package and version, with curl), the local
 * directory; each result is checked against the pin's size and SHA-256
 * before it is used.  @sources may be NULL (the environment's).  When every
 * source fails the error lists each with its reason: a file that does not
 * match is named with the expected and actual digests.  Errors:
 * AIRLOCK_GUEST_IMAGE_ERROR_DIGEST (a source gave a file that does not
 * match the pin, none gave one that does), AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE
 * (no source had it), AIRLOCK_GUEST_IMAGE_ERROR_FAILED (I/O). */
char *airlock_kernel_pin_fetch (const AirlockKernelPin *pin, AirlockArch arch,
                                const char *downloads_dir, const AirlockPinSources *sources,
                                AirlockProgressFunc progress, gpointer progress_data,
                                GError **error);

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
