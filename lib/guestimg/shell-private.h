/* Airlock's static shell: a static busybox from a pinned Debian package
 * (images/guest/shell.ini), at /airlock/shell/bin/busybox in the guest with
 * /airlock/shell/bin/sh linking to it.  `airlock shell` on an image without
 * a /bin/sh runs it: the supervisor binds /airlock/shell read-only at
 * /.airlock in the workload's root (guest/protocol.h, AIRLOCK_SPEC_SHELL).
 *
 * Like the testroot it is a newc archive appended to the image's initramfs
 * (the kernel unpacks concatenated archives in order), cached beside the
 * image in <arch>/shell-<key>/, so the base image stays as it is and only
 * `airlock shell` boots with it.  Its bytes are reproducible: the same base
 * initramfs and the same pin give the same file. */
#pragma once

#include "airlock-macros.h"
#include "arch.h"
#include "guestimg/cpio-private.h"
#include "guestimg/recipe-private.h"
#include "paths.h"

G_BEGIN_DECLS

/* Part of the key and the manifest; bump it when the same inputs would give
 * other bytes. */
#define AIRLOCK_SHELL_BUILDER "airlock-shell/1"
/* In the archive (no leading '/'); the guest sees it at /airlock/shell. */
#define AIRLOCK_SHELL_PATH "airlock/shell"
#define AIRLOCK_SHELL_MANIFEST_FILE "shell.json"
#define AIRLOCK_SHELL_INITRAMFS_FILE "initramfs.cpio"

typedef struct {
  AirlockArch arch;
  AirlockTestrootPackage *package;   /* the pinned package and the one file taken from it */
  char *binary;                      /* that file's base name: "busybox" */
} AirlockShellTools;

void airlock_shell_tools_free (AirlockShellTools *tools);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockShellTools, airlock_shell_tools_free)

/* The [@arch PACKAGE] group of the shell recipe @recipe_path (testroot.ini's
 * format): exactly one package, naming exactly one file, a static shell
 * that answers to the name "sh" (busybox).  Nothing is downloaded yet.
 * NULL with AIRLOCK_GUEST_IMAGE_ERROR_RECIPE naming the file and what is
 * wrong. */
AirlockShellTools *airlock_shell_tools_load (AirlockArch arch, const char *recipe_path,
                                             GError **error);

/* The cache key: SHA-256 over the builder, the arch, the base initramfs's
 * SHA-256, the pin and the archive's entries.  Transfer full. */
char *airlock_shell_tools_key (AirlockShellTools *tools, const char *base_initramfs_sha256);

/* Writes @dir/initramfs.cpio (the base initramfs @base_path, then the shell
 * archive, its package fetched into @downloads_dir and checked against the
 * pin) and, last, @dir/shell.json.  FALSE with @error set; @dir is then left
 * for the caller to remove. */
gboolean airlock_shell_tools_build (AirlockShellTools *tools, const char *key,
                                    const char *base_path, const char *base_sha256,
                                    const char *downloads_dir, const char *dir,
                                    AirlockProgressFunc progress, gpointer progress_data,
                                    GError **error);

/* The shell initramfs cached in @dir for @key (checked like the testroot's:
 * builder, key, type, size, not modified after its manifest): its path and
 * SHA-256 (transfer full), or FALSE with the reason in @ret_why. */
gboolean airlock_shell_tools_cache_load (const char *dir, const char *key, char **ret_path,
                                         char **ret_sha256, char **ret_why);

G_END_DECLS
