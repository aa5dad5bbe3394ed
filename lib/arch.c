#include "config.h"

#include "arch.h"

#include <sys/utsname.h>

static const char *const arch_names[AIRLOCK_N_ARCHES] = { "amd64", "arm64" };
static const char *const arch_unames[AIRLOCK_N_ARCHES] = { "x86_64", "aarch64" };

const char *
airlock_arch_to_string (AirlockArch arch)
{
  g_return_val_if_fail ((unsigned) arch < AIRLOCK_N_ARCHES, NULL);
  return arch_names[arch];
}

const char *
airlock_arch_to_uname (AirlockArch arch)
{
  g_return_val_if_fail ((unsigned) arch < AIRLOCK_N_ARCHES, NULL);
  return arch_unames[arch];
}

gboolean
airlock_arch_from_string (const char *name, AirlockArch *ret_arch)
{
  g_return_val_if_fail (name != NULL, FALSE);

  for (unsigned i = 0; i < AIRLOCK_N_ARCHES; i++)
    if (g_str_equal (name, arch_names[i]) || g_str_equal (name, arch_unames[i]))
      {
        if (ret_arch)
          *ret_arch = (AirlockArch) i;
        return TRUE;
      }
  return FALSE;
}

gboolean
airlock_arch_host (AirlockArch *ret_arch)
{
  struct utsname u;

  if (uname (&u) < 0)
    return FALSE;
  return airlock_arch_from_string (u.machine, ret_arch);
}
