/* What a VM tells its caller (vm.h): whether its run completed and why
 * not, the channel, events, console, output and capture it kept, its
 * timings, accelerator, connection and versions.  Plain reads of the
 * state the lifecycle (vm.c) and the teardown (teardown.c) left. */
#include "config.h"

#include "vm/vm-private.h"
#include "vm/vm-state-private.h"
#include "vm/volumes-private.h"

GBytes *
airlock_vm_get_pcap (AirlockVm *vm)
{
  return vm->pcap ? g_bytes_ref (vm->pcap) : NULL;
}

const char *
airlock_vm_get_pcap_error (AirlockVm *vm)
{
  return vm->pcap_error;
}

GBytes *
airlock_vm_get_stdout (AirlockVm *vm)
{
  return g_bytes_new (vm->out[0]->data, vm->out[0]->len);
}

GBytes *
airlock_vm_get_stderr (AirlockVm *vm)
{
  return g_bytes_new (vm->out[1]->data, vm->out[1]->len);
}

gboolean
airlock_vm_get_output_truncated (AirlockVm *vm)
{
  return vm->out_truncated;
}

gboolean
airlock_vm_is_complete (AirlockVm *vm)
{
  return vm->channel && airlock_channel_get_state (vm->channel) == AIRLOCK_CHANNEL_COMPLETE;
}

const char *
airlock_vm_get_reason (AirlockVm *vm)
{
  return airlock_vm_is_complete (vm) ? NULL : vm->reason;
}

AirlockChannel *
airlock_vm_get_channel (AirlockVm *vm)
{
  return vm->channel;
}

AirlockEventLog *
airlock_vm_get_events (AirlockVm *vm)
{
  return vm->events;
}

GBytes *
airlock_vm_get_console (AirlockVm *vm)
{
  GBytes *b;

  g_mutex_lock (&vm->lock);
  b = g_bytes_new (vm->console->data, vm->console->len);
  g_mutex_unlock (&vm->lock);
  return b;
}

const AirlockVmTimings *
airlock_vm_get_timings (AirlockVm *vm)
{
  return &vm->t;
}

const char *
airlock_vm_get_accel (AirlockVm *vm)
{
  return g_strcmp0 (vm->virt_type, "kvm") == 0 ? "kvm" : "tcg";
}

const char *
airlock_vm_get_accel_notice (AirlockVm *vm)
{
  return vm->accel_notice;
}

GPtrArray *
airlock_vm_get_swept (AirlockVm *vm)
{
  return vm->swept;
}

const char *
airlock_vm_get_uri (AirlockVm *vm)
{
  return vm->conn ? vm->conn->uri : NULL;
}

const char *
airlock_vm_get_domain_name (AirlockVm *vm)
{
  return vm->name;
}

void
airlock_vm_get_heartbeat (AirlockVm *vm, guint *ret_period_ms, guint *ret_tolerance_ms)
{
  *ret_period_ms = vm->opts.heartbeat_ms;
  *ret_tolerance_ms = vm->opts.heartbeat_tolerance_ms;
}

static char *
version_string (gboolean ok, unsigned long v)
{
  if (!ok)
    return g_strdup ("unknown");
  return g_strdup_printf ("%lu.%lu.%lu", v / 1000000, (v / 1000) % 1000, v % 1000);
}

/* The call first, then the value: as one function's two arguments, the
 * order of the two was the compiler's, and every bundle said 0.0.0. */
char *
airlock_vm_get_qemu_version (AirlockVm *vm)
{
  unsigned long v = 0;
  gboolean ok = vm->conn && virConnectGetVersion (vm->conn->conn, &v) == 0;

  return version_string (ok, v);
}

char *
airlock_vm_get_libvirt_version (AirlockVm *vm)
{
  unsigned long v = 0;
  gboolean ok = vm->conn && virConnectGetLibVersion (vm->conn->conn, &v) == 0;

  return version_string (ok, v);
}

char *
airlock_libvirt_library_version (void)
{
  unsigned long v = 0;

  if (virGetVersion (&v, NULL, NULL) != 0)
    return NULL;
  return version_string (TRUE, v);
}

gboolean
airlock_vm_describe_storage (AirlockVm *vm, char **ret_detail)
{
  if (!vm->conn->remote)
    {
      *ret_detail = g_strdup_printf ("local: the hypervisor reads the cache at %s",
                                     vm->cache_dir);
      return TRUE;
    }
  return airlock_remote_pool_check (vm->conn, ret_detail);
}

gboolean
airlock_vm_host_lost (AirlockVm *vm)
{
  gboolean lost;

  g_mutex_lock (&vm->lock);
  lost = vm->conn_lost && vm->channel
         && airlock_channel_get_state (vm->channel) != AIRLOCK_CHANNEL_COMPLETE;
  g_mutex_unlock (&vm->lock);
  return lost;
}

gboolean
airlock_vm_took_stdin (AirlockVm *vm)
{
  return g_atomic_int_get (&vm->stdin_taken) != 0;
}
