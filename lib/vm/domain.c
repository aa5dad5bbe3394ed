/* A run's domain, prepared and created: the run directory and the socket
 * directory (each with the owner file that lets a later run sweep them),
 * the network (the sinkhole process and the socket QEMU's NIC connects
 * to, given to QEMU's user alone), the kernel command line and the domain
 * XML handed to libvirt, paused until the streams are open (vm.c). */
#include "config.h"

#include "vm/domain-private.h"

#include "fsutil-private.h"
#include "protocol.h"
#include "vm/capture-file-private.h"
#include "vm/domain-xml-private.h"
#include "vm/volumes-private.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* The user QEMU runs as under the local daemon, from its capabilities. */
static gboolean
daemon_qemu_user (AirlockVm *vm, guint32 *ret_uid, guint32 *ret_gid, GError **error)
{
  char *caps = virConnectGetCapabilities (vm->conn->conn);
  gboolean found = caps && airlock_capture_qemu_user (caps, vm->virt_type, ret_uid, ret_gid);

  free (caps);
  if (!found)
    g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                 "cannot tell which user QEMU runs as under '%s' (no DAC label for '%s' domains "
                 "in its capabilities): the network's socket cannot be given to it alone",
                 vm->conn->uri, vm->virt_type);
  return found;
}

static char *
build_cmdline (AirlockVm *vm)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, AIRLOCK_CMDLINE_RUN_MS "%u", vm->opts.guest_run_ms);
  if (vm->test_mode)
    g_string_append_printf (s, " " AIRLOCK_CMDLINE_TEST "%s", vm->test_mode);
  return g_string_free (s, FALSE);
}

/* The run's network: airlock's sinkhole process (sinkhole-proc.h), which
 * QEMU's NIC connects to and which writes the capture.  Runs with a
 * workload get a NIC; the boot check does not need one.  Under the
 * embedded driver QEMU is our child, running as us: the private socket
 * directory.  Through a local daemon QEMU runs as its own user: a
 * directory it can traverse (0711: nobody else can list it or put a file
 * in it) and a socket given to QEMU's user alone (0600), never
 * world-writable: whoever connects first is the guest's network.  A
 * remote hypervisor's QEMU cannot reach a socket here: the guest gets no
 * NIC but the channel AIRLOCK_PORT_NET, whose stream we connect to the
 * socket ourselves (streams.c), in a directory of ours alone. */
static gboolean
prepare_network (AirlockVm *vm, const char *owner, GError **error)
{
  guint32 qemu_uid = 0, qemu_gid = 0;
  gboolean give = FALSE;

  if (!vm->spec || vm->opts.no_network)
    return TRUE;
  if (vm->conn->embedded)
    vm->pcap_dir = g_strdup (vm->socket_dir);
  else if (g_str_has_prefix (vm->conn->uri, "qemu:///") || vm->net_port)
    {
      g_autofree char *runtime = airlock_runtime_dir (error);
      g_autofree char *owner_file = NULL;

      if (!runtime)
        return FALSE;
      vm->pcap_dir = g_strdup_printf ("%s/%s-net", runtime, vm->run_id);
      if (g_mkdir_with_parents (vm->pcap_dir, 0700) < 0 || chmod (runtime, 0711) < 0
          || chmod (vm->pcap_dir, 0711) < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                       "cannot create the network directory '%s': %s", vm->pcap_dir,
                       g_strerror (errno));
          return FALSE;
        }
      owner_file = g_build_filename (vm->pcap_dir, "owner", NULL);
      if (!g_file_set_contents (owner_file, owner, -1, error))
        return FALSE;
      if (vm->net_port)
        ;   /* the socket is ours: the stream's far end is the remote QEMU */
      else if (!daemon_qemu_user (vm, &qemu_uid, &qemu_gid, error))
        return FALSE;
      else if (qemu_uid != geteuid ())
        {
          if (geteuid () != 0)
            {
              g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                           "QEMU runs as uid %u under '%s': only root can give it the "
                           "network's socket; run as root, or use the embedded driver "
                           "(--connect qemu:///embedded)", qemu_uid, vm->conn->uri);
              return FALSE;
            }
          give = TRUE;
        }
    }
  else
    return TRUE;
  vm->sinkhole = airlock_sinkhole_proc_start (vm->pcap_dir, give, qemu_uid, qemu_gid,
                                              vm->opts.serve, error);
  if (!vm->sinkhole)
    return FALSE;
  vm->pcap_path = g_strdup (airlock_sinkhole_proc_pcap (vm->sinkhole));
  return TRUE;
}

gboolean
airlock_vm_prepare_run_dir (AirlockVm *vm, GError **error)
{
  const AirlockOwner *self = airlock_owner_self ();
  g_autofree char *owner_file = NULL;
  g_autofree char *owner = NULL;

  vm->run_dir = g_build_filename (vm->cache_dir, "runs", vm->run_id, NULL);
  if (g_mkdir_with_parents (vm->run_dir, 0700) < 0)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "cannot create run directory '%s': %s", vm->run_dir, g_strerror (errno));
      return FALSE;
    }
  /* Lets a later run remove this directory if we crash (connection.c). */
  owner_file = g_build_filename (vm->run_dir, "owner", NULL);
  owner = g_strdup_printf ("%s %s %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "\n", self->boot_id,
                           self->host, self->pid, self->start_time);
  if (!g_file_set_contents (owner_file, owner, -1, error))
    return FALSE;
  if (vm->conn->embedded)
    {
      g_autofree char *runtime = airlock_runtime_dir (error);
      g_autofree char *sock_owner = NULL;

      if (!runtime)
        return FALSE;
      vm->socket_dir = g_build_filename (runtime, vm->run_id, NULL);
      if (g_mkdir_with_parents (vm->socket_dir, 0700) < 0)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                       "cannot create socket directory '%s': %s", vm->socket_dir, g_strerror (errno));
          return FALSE;
        }
      sock_owner = g_build_filename (vm->socket_dir, "owner", NULL);
      if (!g_file_set_contents (sock_owner, owner, -1, error))
        return FALSE;
    }
  return prepare_network (vm, owner, error);
}

gboolean
airlock_vm_start_domain (AirlockVm *vm, GError **error)
{
  const AirlockOwner *self = airlock_owner_self ();
  g_autofree char *cmdline = build_cmdline (vm);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *xml = NULL;
  const char *emulator_env = g_getenv (vm->arch == AIRLOCK_ARCH_AMD64 ? "AIRLOCK_QEMU_X86_64"
                                                                      : "AIRLOCK_QEMU_AARCH64");
  AirlockDomainSpec spec = {
    .arch = vm->arch,
    .name = vm->name,
    .uuid = uuid,
    .virt_type = vm->virt_type,
    .emulator = (emulator_env && *emulator_env) ? emulator_env : NULL,
    .memory_mib = vm->opts.memory_mib,
    .vcpus = vm->opts.vcpus,
    .kernel = vm->image->kernel_path,
    .initrd = vm->image->initramfs_path,
    .cmdline = cmdline,
    .arm64_cpu_max = vm->opts.arm64_cpu_max,
    .icount = vm->opts.icount || vm->opts.clock_warp,
    /* The embedded driver (libvirt >= 6.1) runs the libvirt we load, which
     * takes <qemu:capabilities> (5.5+); a daemon may be any version. */
    .short_cpu_check = vm->conn->embedded,
    .owner_boot_id = self->boot_id,
    .owner_host = self->host,
    .owner_pid = self->pid,
    .owner_start_time = self->start_time,
    .run_dir = vm->run_dir,
    .socket_dir = vm->socket_dir,
    .root_disk = vm->root_disk_path,
    .root_disk_serial = vm->root_disk_serial,
    .stdio = vm->stdio,
    .net_socket = vm->sinkhole && !vm->net_port ? airlock_sinkhole_proc_socket (vm->sinkhole) : NULL,
    .net_port = vm->sinkhole && vm->net_port,
  };
  unsigned flags = VIR_DOMAIN_START_PAUSED;
  g_autofree char *remote_kernel = NULL;
  g_autofree char *remote_initrd = NULL;
  g_autofree char *remote_disk = NULL;

  /* A remote hypervisor boots from its own copies, which it has through
   * libvirt alone (volumes.c). */
  if (vm->conn->remote)
    {
      remote_kernel = airlock_remote_volume_ensure (vm->conn, vm->image->kernel_path,
                                                    vm->image->kernel_sha256, "the guest kernel",
                                                    error);
      if (!remote_kernel)
        return FALSE;
      remote_initrd = airlock_remote_volume_ensure (vm->conn, vm->image->initramfs_path,
                                                    vm->image->initramfs_sha256,
                                                    "the guest initramfs", error);
      if (!remote_initrd)
        return FALSE;
      if (vm->root_disk_path
          && !(remote_disk = airlock_remote_volume_ensure (vm->conn, vm->root_disk_path, NULL,
                                                           "the image's rootfs disk", error)))
        return FALSE;
      spec.kernel = remote_kernel;
      spec.initrd = remote_initrd;
      spec.root_disk = remote_disk;
    }
  /* Autodestroy ties the domain to our connection; the embedded driver does
   * not offer it, so there the sweep in connection.c does that job. */
  if (!vm->conn->embedded)
    flags |= VIR_DOMAIN_START_AUTODESTROY;
  xml = airlock_domain_xml_build (&spec);
  vm->t.begin = g_get_monotonic_time ();
  vm->dom = virDomainCreateXML (vm->conn->conn, xml, flags);
  if (!vm->dom)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START,
                   "cannot start %s domain '%s' on '%s': %s", airlock_arch_to_string (vm->arch),
                   vm->name, vm->conn->uri, airlock_vir_last_error ());
      return FALSE;
    }
  vm->t.created = g_get_monotonic_time ();
  if (vm->conn->embedded)
    {
      gboolean is_child;
      pid_t pid = airlock_connection_qemu_pid (vm->conn, vm->name, &is_child);

      if (is_child)
        {
          airlock_connection_claim_qemu (pid);
          vm->qemu_pid = pid;
        }
    }
  return TRUE;
}
