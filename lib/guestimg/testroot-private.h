/* The testroot: the test programs (tests/guest) as a workload root at
 * /airlock/testroot in the guest, for `airlock run --guest-program` and the
 * VM tests.
 *
 * It is a second newc archive appended to the image's initramfs (the kernel
 * unpacks concatenated archives in order), so the base image stays as it is
 * and the test programs cost one more file in the cache, not another kernel
 * stage or image.  Its bytes are reproducible like the base's: the same base
 * initramfs and the same programs give the same file. */
#pragma once

#include "airlock-macros.h"
#include "arch.h"
#include "guestimg/cpio-private.h"
#include "guestimg/recipe-private.h"
#include "paths.h"

G_BEGIN_DECLS

/* Part of the testroot's key and manifest; bump it when the same inputs
 * would give other bytes (a new directory, another layout). */
#define AIRLOCK_TESTROOT_BUILDER "airlock-testroot/2"
#define AIRLOCK_TESTROOT_PATH "airlock/testroot"
#define AIRLOCK_TESTROOT_MANIFEST_FILE "testroot.json"
#define AIRLOCK_TESTROOT_INITRAMFS_FILE "initramfs.cpio"

typedef struct {
  char *name;        /* "testprog": the file is <name>-<arch> */
  char *path;        /* in the archive: "airlock/testroot/bin/testprog" */
  char *host_path;
  char *sha256;
} AirlockTestrootProgram;

typedef struct {
  AirlockArch arch;
  GPtrArray *programs;   /* AirlockTestrootProgram */
  GPtrArray *commands;   /* char *: the behaviours of this arch, each a /bin link to testprog */
  GPtrArray *packages;   /* AirlockTestrootPackage: pinned Debian packages (testroot.ini)
                          * whose files go in at their own paths: strace and the
                          * libraries it loads, for bench/supervisor */
} AirlockTestroot;

void airlock_testroot_free (AirlockTestroot *testroot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockTestroot, airlock_testroot_free)

/* The test programs for @arch from @programs_dir (testprog-<arch>,
 * testprog-exec-<arch>, and on arm64 testprog-arm32-arm64 when it was
 * built), hashed, and the packages of @arch in the testroot recipe
 * @recipe_path (nothing is downloaded yet).  Returns NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM when a required program is
 * missing, the message saying how to get it, or
 * AIRLOCK_GUEST_IMAGE_ERROR_RECIPE. */
AirlockTestroot *airlock_testroot_load (AirlockArch arch, const char *programs_dir,
                                        const char *recipe_path, GError **error);

/* The cache key of the testroot initramfs: SHA-256 over the builder, the
 * base initramfs's SHA-256 and every entry of the testroot archive (path,
 * mode, and the target or the contents' SHA-256; for package files, the
 * package's pin and the paths taken from it, which fix their bytes).
 * Transfer full. */
char *airlock_testroot_key (AirlockTestroot *testroot, const char *base_initramfs_sha256);

/* Adds the testroot's entries to @cpio: the programs under bin/, a link
 * bin/COMMAND -> testprog per command, and the empty directories a root
 * needs (proc dev sys etc root, tmp with mode 1777); with @packages_dir
 * (where airlock_testroot_extract_packages() put them), the package files
 * too. */
gboolean airlock_testroot_add_to (AirlockTestroot *testroot, AirlockCpio *cpio,
                                  const char *packages_dir, GError **error);

/* Fetches each package of @testroot into @downloads_dir (apt-get download,
 * checked against its pin; a matching file already there is used) and
 * extracts its files into @dest, which must exist.  Errors name the
 * package: AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE (the pin cannot be
 * downloaded: how to update it), _DIGEST, _FAILED (a file the recipe names
 * is not in the package, or is neither a file nor a symlink). */
gboolean airlock_testroot_extract_packages (AirlockTestroot *testroot, const char *downloads_dir,
                                            const char *dest, AirlockProgressFunc progress,
                                            gpointer progress_data, GError **error);

/* Writes @dir/initramfs.cpio (the base initramfs @base_path, then the
 * testroot archive, its package files fetched into @downloads_dir) and,
 * last, @dir/testroot.json.  @progress may be NULL.  Returns FALSE with
 * @error set; @dir is then left for the caller to remove. */
gboolean airlock_testroot_build (AirlockTestroot *testroot, const char *key, const char *base_path,
                                 const char *base_sha256, const char *downloads_dir,
                                 const char *dir, AirlockProgressFunc progress,
                                 gpointer progress_data, GError **error);

/* The testroot initramfs cached in @dir for @key: its path and SHA-256 in
 * @ret_path / @ret_sha256 (transfer full), or FALSE with the reason in
 * @ret_why (never an error: whatever is wrong, the answer is to build).
 * Like the image's manifest check, it checks type, size and that the file
 * was not modified after the manifest, not the whole file's hash. */
gboolean airlock_testroot_cache_load (const char *dir, const char *key, char **ret_path,
                                      char **ret_sha256, char **ret_why);

G_END_DECLS
