/* An initramfs variant: a base guest image's initramfs with one more
 * newc archive appended (the testroot's test programs, the static shell),
 * cached in a directory of its own with a manifest (initramfs-variant.c).
 * The testroot and the shell differ only in what the archive holds and
 * what their manifest says of it; writing and checking the variant is
 * shared here. */
#pragma once

#include "arch.h"
#include "guestimg/cpio-private.h"
#include "paths.h"

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* What names a kind of variant. */
typedef struct {
  const char *what;           /* "testroot", "shell": messages, the stage "write @what" */
  const char *builder;        /* the manifest's "builder" */
  const char *manifest_file;  /* "testroot.json" */
  const char *initramfs_file; /* "initramfs.cpio" */
} AirlockInitramfsVariantKind;

/* Adds the members of one kind's manifest (after builder, key, arch and
 * base_initramfs_sha256; before initramfs). */
typedef void (*AirlockInitramfsVariantDescribe) (JsonBuilder *b, gpointer user_data);

/* Writes @dir/@kind->initramfs_file, the initramfs @base_path with @cpio
 * appended, then (last: its mtime vouches for the archive) the manifest:
 * builder, @key, @arch, @base_sha256, what @describe adds, and the
 * initramfs's file, size and SHA-256.  With @progress, the archive's
 * entries are reported as the stage "write @kind->what". */
gboolean airlock_initramfs_variant_write (const AirlockInitramfsVariantKind *kind, AirlockCpio *cpio,
                                          const char *key, AirlockArch arch,
                                          const char *base_path, const char *base_sha256,
                                          const char *dir, AirlockInitramfsVariantDescribe describe,
                                          gpointer describe_data, AirlockProgressFunc progress,
                                          gpointer progress_data, GError **error);

/* The cache check of a variant in @dir for @key: its manifest is @kind's,
 * for @key, and the initramfs is a regular file of the recorded size not
 * modified after the manifest was written.  TRUE with the initramfs's path
 * and SHA-256; FALSE with the reason in @ret_why (never an error: the
 * answer is to build). */
gboolean airlock_initramfs_variant_cache_load (const AirlockInitramfsVariantKind *kind,
                                               const char *dir, const char *key, char **ret_path,
                                               char **ret_sha256, char **ret_why);

G_END_DECLS
