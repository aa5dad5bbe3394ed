/* The guest image recipe shipped in the data dir: kernels.ini pins a Debian
 * kernel package per arch, modules.list names the modules the guest needs. */
#pragma once

#include "airlock-macros.h"
#include "arch.h"

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char *package;   /* "linux-image-6.1.0-50-amd64" */
  char *version;   /* "6.1.176-1" */
  char *sha256;    /* of the .deb, lowercase hex */
  guint64 size;    /* of the .deb, bytes */
  char *origin;    /* the kernels.ini it came from, for messages */
} AirlockKernelPin;

void airlock_kernel_pin_free (AirlockKernelPin *pin);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockKernelPin, airlock_kernel_pin_free)

/* Reads the [@arch] group of the kernels.ini at @path.  Every value is
 * checked (it becomes an apt-get argument and part of the cache key).
 * Returns NULL with AIRLOCK_GUEST_IMAGE_ERROR_RECIPE naming @path, and the
 * group and key at fault. */
AirlockKernelPin *airlock_kernel_pin_load (const char *path, AirlockArch arch, GError **error);

/* Reads and parses the modules.list at @path (see airlock_modules_list_parse).
 * Returns an array of AirlockModuleRequest, or NULL with
 * AIRLOCK_GUEST_IMAGE_ERROR_RECIPE naming @path. */
GPtrArray *airlock_modules_list_load (const char *path, GError **error);

G_END_DECLS
