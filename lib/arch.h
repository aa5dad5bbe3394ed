/* Guest architectures airlock can run. */
#pragma once

#include "airlock-macros.h"

G_BEGIN_DECLS

typedef enum {
  AIRLOCK_ARCH_AMD64 = 0,
  AIRLOCK_ARCH_ARM64 = 1,
} AirlockArch;

#define AIRLOCK_N_ARCHES 2

/* Returns the Debian/OCI name ("amd64", "arm64"); static string. */
AIRLOCK_PUBLIC const char *airlock_arch_to_string (AirlockArch arch);

/* Returns the kernel's name ("x86_64", "aarch64"); static string. */
AIRLOCK_PUBLIC const char *airlock_arch_to_uname (AirlockArch arch);

/* Parses "amd64"/"x86_64"/"arm64"/"aarch64".  Returns FALSE (and leaves
 * @ret_arch untouched) for anything else. */
AIRLOCK_PUBLIC gboolean airlock_arch_from_string (const char *name, AirlockArch *ret_arch);

/* The arch of the machine this process runs on, if it is one airlock knows. */
AIRLOCK_PUBLIC gboolean airlock_arch_host (AirlockArch *ret_arch);

G_END_DECLS
