/* What a hypervisor offers an arch (vm-private.h), for the pool of
 * hypervisors that places runs (lib/case/hosts.c). */
#include "config.h"

#include "vm/vm-private.h"

#include "vm/connection-private.h"

AirlockHostSupport
airlock_hypervisor_probe (const char *uri, const char *cache_dir, AirlockArch arch,
                          GError **error)
{
  g_autoptr (GPtrArray) swept = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (AirlockConnection) c = airlock_connection_open (uri, cache_dir, swept, error);
  /* The machines the domain XML uses: aarch64 has no default machine. */
  const char *machine = arch == AIRLOCK_ARCH_AMD64 ? "q35" : "virt";
  AirlockHostSupport support = AIRLOCK_HOST_CANNOT;
  char *caps;

  if (!c)
    return AIRLOCK_HOST_CANNOT;
  caps = virConnectGetDomainCapabilities (c->conn, NULL, airlock_arch_to_uname (arch), machine,
                                          "kvm", 0);
  if (caps)
    support = AIRLOCK_HOST_KVM;
  else if ((caps = virConnectGetDomainCapabilities (c->conn, NULL, airlock_arch_to_uname (arch),
                                                    machine, "qemu", 0)))
    support = AIRLOCK_HOST_TCG;
  else
    g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_EMULATOR,
                 "'%s' cannot run %s guests: %s", c->uri, airlock_arch_to_string (arch),
                 airlock_vir_last_error ());
  free (caps);
  return support;
}
