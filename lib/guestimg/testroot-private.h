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
#include "paths.h"

G_BEGIN_DECLS

/* Part of the testroot's key and manifest; bump it when the same inputs
 * would give other bytes (a new directory, another layout). */
#define AIRLOCK_TESTROOT_BUILDER "airlock-testroot/1"
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
} AirlockTestroot;

void airlock_testroot_free (AirlockTestroot *testroot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockTestroot, airlock_testroot_free)

/* The test programs for @arch from @programs_dir (testprog-<arch>,
 * testprog-exec-<arch>, and on arm64 testprog-arm32-arm64 when it was
 * built), hashed.  Returns NULL with AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM
 * when a required one is missing, the message saying how to get it. */
AirlockTestroot *airlock_testroot_load (AirlockArch arch, const char *programs_dir, GError **error);

/* The cache key of the testroot initramfs: SHA-256 over the builder, the
 * base initramfs's SHA-256 and every entry of the testroot archive (path,
 * mode, and the target or the contents' SHA-256).  Transfer full. */
char *airlock_testroot_key (AirlockTestroot *testroot, const char *base_initramfs_sha256);

/* Adds the testroot's entries to @cpio: the programs under bin/, a link
 * bin/COMMAND -> testprog per command, and the empty directories a root
 * needs (proc dev sys etc root, tmp with mode 1777). */
gboolean airlock_testroot_add_to (AirlockTestroot *testroot, AirlockCpio *cpio, GError **error);

/* Writes @dir/initramfs.cpio (the base initramfs @base_path, then the
 * testroot archive) and, last, @dir/testroot.json.  @progress may be NULL.
 * Returns FALSE with @error set; @dir is then left for the caller to
 * remove. */
gboolean airlock_testroot_build (AirlockTestroot *testroot, const char *key, const char *base_path,
                                 const char *base_sha256, const char *dir,
                                 AirlockProgressFunc progress, gpointer progress_data,
                                 GError **error);

/* The testroot initramfs cached in @dir for @key: its path and SHA-256 in
 * @ret_path / @ret_sha256 (transfer full), or FALSE with the reason in
 * @ret_why (never an error: whatever is wrong, the answer is to build).
 * Like the image's manifest check, it checks type, size and that the file
 * was not modified after the manifest, not the whole file's hash. */
gboolean airlock_testroot_cache_load (const char *dir, const char *key, char **ret_path,
                                      char **ret_sha256, char **ret_why);

G_END_DECLS
