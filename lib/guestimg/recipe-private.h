/* The guest image recipe shipped in the data dir: kernels.ini pins a Debian
 * kernel package per arch, modules.list names the modules the guest needs,
 * testroot.ini pins the Debian packages the testroot takes files from. */
#pragma once

#include "airlock-macros.h"
#include "arch.h"

#include <glib.h>

G_BEGIN_DECLS

/* What a pinned package is for: it decides what an error about it tells
 * the user to do. */
typedef enum {
  AIRLOCK_PIN_KERNEL,     /* kernels.ini: the guest kernel */
  AIRLOCK_PIN_TESTROOT,   /* testroot.ini: files of the testroot (strace) */
  AIRLOCK_PIN_SHELL,      /* shell.ini: airlock's static shell (busybox) */
} AirlockPinRole;

/* A Debian package pinned by version, sha256 and size. */
typedef struct {
  char *package;   /* "linux-image-6.1.0-50-amd64" */
  char *version;   /* "6.1.176-1" */
  char *sha256;    /* of the .deb, lowercase hex */
  guint64 size;    /* of the .deb, bytes */
  char *origin;    /* the kernels.ini or testroot.ini it came from, for messages */
  AirlockPinRole role;
} AirlockKernelPin;

void airlock_kernel_pin_free (AirlockKernelPin *pin);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockKernelPin, airlock_kernel_pin_free)

/* Reads the [@arch] group of the kernels.ini at @path.  Every value is
 * checked (it becomes an apt-get argument and part of the cache key).
 * Returns NULL with AIRLOCK_GUEST_IMAGE_ERROR_RECIPE naming @path, and the
 * group and key at fault. */
AirlockKernelPin *airlock_kernel_pin_load (const char *path, AirlockArch arch, GError **error);

/* A package of testroot.ini and the files the testroot takes from it. */
typedef struct {
  AirlockKernelPin *pin;
  char **files;    /* paths in the package, relative and normalised ("usr/bin/strace");
                    * each a regular file or a symlink, stored at the same path in the
                    * testroot */
} AirlockTestrootPackage;

void airlock_testroot_package_free (AirlockTestrootPackage *package);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockTestrootPackage, airlock_testroot_package_free)

/* Reads the groups "[@arch PACKAGE]" of the testroot.ini at @path, in file
 * order (none is valid: that arch's testroot takes no package).  Every value
 * is checked like kernels.ini's; files= is a ';'-separated list of
 * normalised relative paths.  Returns an array of AirlockTestrootPackage, or
 * NULL with AIRLOCK_GUEST_IMAGE_ERROR_RECIPE naming @path, the group and the
 * key at fault. */
GPtrArray *airlock_testroot_packages_load (const char *path, AirlockArch arch, GError **error);

/* Reads and parses the modules.list at @path (see airlock_modules_list_parse).
 * Returns an array of AirlockModuleRequest, or NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_RECIPE naming @path. */
GPtrArray *airlock_modules_list_load (const char *path, GError **error);

G_END_DECLS
