/* KVM only after a probe boot succeeds (cached per host boot), TCG
 * otherwise; the names of the choices.
 *
 * The probe boots a VM, and a VM is what asks for the accelerator
 * (airlock_vm_new()): so the probe is not here but handed in as a function
 * (AirlockAccelProbeFunc) by vm.c, which owns booting.  This file decides
 * and remembers, and includes nothing of vm.c; vm.c includes this file's
 * header.  (A probe file of its own above both would still be called from
 * airlock_vm_new(), below it: the circle again.) */
#include "config.h"

#include "fsutil-private.h"

#include "vm/accel-private.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is the connection's hypervisor this machine?  Then /dev/kvm here is the
 * one QEMU will use. */
static gboolean
uri_is_local (const char *uri)
{
  return g_str_has_prefix (uri, "qemu:///");
}

static char *
check_dev_kvm (void)
{
  int fd = open ("/dev/kvm", O_RDWR | O_CLOEXEC);
  int version;

  if (fd < 0)
    return g_strdup_printf ("/dev/kvm: %s", g_strerror (errno));
  version = ioctl (fd, KVM_GET_API_VERSION, 0);
  close (fd);
  if (version != KVM_API_VERSION)
    return g_strdup_printf ("/dev/kvm: unexpected API version %d", version);
  return NULL;
}

/* The probe's result is cached per host boot, emulator and URI: KVM does not
 * start or stop working between two runs of one boot, and probing a broken
 * KVM costs the whole probe timeout. */
static char *
probe_cache_key (AirlockConnection *conn, AirlockArch arch)
{
  const AirlockOwner *self = airlock_owner_self ();
  const char *emulator = arch == AIRLOCK_ARCH_AMD64 ? AIRLOCK_QEMU_X86_64 : AIRLOCK_QEMU_AARCH64;
  struct stat st = { 0 };
  g_autofree char *text = NULL;

  (void) stat (emulator, &st);
  /* The embedded driver's slot differs between runs but not its host. */
  text = g_strdup_printf ("%s|%s|%s|%lld|%lld|%s", self->boot_id, airlock_arch_to_string (arch),
                          emulator, (long long) st.st_size, (long long) st.st_mtime,
                          conn->embedded ? "embedded" : conn->uri);
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

static gboolean
probe_cache_read (const char *path, const char *key, gboolean *ret_ok, char **ret_reason)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *stored = NULL;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
    return FALSE;
  stored = g_key_file_get_string (kf, "kvm", "key", NULL);
  if (g_strcmp0 (stored, key) != 0)
    return FALSE;
  *ret_ok = g_key_file_get_boolean (kf, "kvm", "usable", NULL);
  *ret_reason = g_key_file_get_string (kf, "kvm", "reason", NULL);
  return TRUE;
}

static void
probe_cache_write (const char *path, const char *key, gboolean ok, const char *reason)
{
  g_autoptr (GKeyFile) kf = g_key_file_new ();
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *cache_root = g_path_get_dirname (dir);   /* CACHE/accel/ARCH */

  g_key_file_set_string (kf, "kvm", "key", key);
  g_key_file_set_boolean (kf, "kvm", "usable", ok);
  g_key_file_set_string (kf, "kvm", "reason", reason ? reason : "");
  if (airlock_cache_mkdir (cache_root, dir, 0700) == 0)
    (void) g_key_file_save_to_file (kf, path, NULL);
}

gboolean
airlock_accel_from_string (const char *name, AirlockAccel *ret_accel)
{
  static const char *const names[] = { "auto", "tcg", "kvm" };

  for (unsigned i = 0; i < G_N_ELEMENTS (names); i++)
    if (g_strcmp0 (name, names[i]) == 0)
      {
        *ret_accel = (AirlockAccel) i;
        return TRUE;
      }
  return FALSE;
}

gboolean
airlock_accel_resolve (AirlockConnection *conn, AirlockArch arch, AirlockAccel want,
                       const AirlockVmOptions *options, AirlockAccelProbeFunc probe,
                       gpointer probe_data, char **ret_virt_type, char **ret_notice,
                       GError **error)
{
  AirlockArch host;
  g_autofree char *why = NULL;
  g_autofree char *key = NULL;
  g_autofree char *cache_file = NULL;
  g_autofree char *caps = NULL;
  gboolean cached_ok = FALSE;

  if (want == AIRLOCK_ACCEL_TCG)
    {
      *ret_virt_type = g_strdup ("qemu");
      return TRUE;
    }

  /* QEMU counts instructions, and so can run the clock ahead of them, only
   * for the instructions it translates itself: a warped clock is TCG's. */
  if (options->clock_warp)
    {
      if (want == AIRLOCK_ACCEL_KVM)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_KVM,
                       "KVM cannot warp the guest's clock (QEMU runs the clock ahead only of "
                       "the instructions it emulates): run under TCG, or with the real clock "
                       "(--clock real, AIRLOCK_CLOCK_REAL) under KVM");
          return FALSE;
        }
      *ret_virt_type = g_strdup ("qemu");
      /* Worth a word only where KVM might have run: the host's arch, a
       * /dev/kvm that opens, and no probe of this boot that said no. */
      if (airlock_arch_host (&host) && host == arch && uri_is_local (conn->uri)
          && !(why = check_dev_kvm ()))
        {
          key = probe_cache_key (conn, arch);
          cache_file = g_build_filename (options->cache_dir, "accel", airlock_arch_to_string (arch),
                                         NULL);
          if (!probe_cache_read (cache_file, key, &cached_ok, &why) || cached_ok)
            *ret_notice = g_strdup ("KVM was not tried: the warped clock (--clock warp) needs "
                                    "TCG; --clock real lets a run use KVM");
        }
      return TRUE;
    }

  if (!airlock_arch_host (&host) || host != arch)
    {
      if (want == AIRLOCK_ACCEL_KVM)
        {
          g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_KVM,
                       "KVM cannot run %s guests on this host: its architecture differs",
                       airlock_arch_to_string (arch));
          return FALSE;
        }
      /* Emulating a foreign arch is the normal case, not worth a notice. */
      *ret_virt_type = g_strdup ("qemu");
      return TRUE;
    }

  if (uri_is_local (conn->uri))
    why = check_dev_kvm ();
  if (!why)
    {
      caps = virConnectGetDomainCapabilities (conn->conn, NULL, airlock_arch_to_uname (arch),
                                              arch == AIRLOCK_ARCH_AMD64 ? "q35" : "virt", "kvm", 0);
      if (!caps)
        why = g_strdup_printf ("libvirt offers no KVM domains: %s", airlock_vir_last_error ());
    }
  if (!why)
    {
      key = probe_cache_key (conn, arch);
      cache_file = g_build_filename (options->cache_dir, "accel", airlock_arch_to_string (arch), NULL);
      if (!probe_cache_read (cache_file, key, &cached_ok, &why))
        {
          why = probe (conn, probe_data);
          probe_cache_write (cache_file, key, why == NULL, why);
        }
      else if (cached_ok)
        g_clear_pointer (&why, g_free);
      else if (why)
        {
          /* Say it is remembered, so a user who fixed KVM knows what to clear. */
          char *more = g_strdup_printf ("%s (probe result cached in '%s' for this host boot)", why,
                                        cache_file);
          g_free (why);
          why = more;
        }
    }

  if (!why)
    {
      *ret_virt_type = g_strdup ("kvm");
      return TRUE;
    }
  if (want == AIRLOCK_ACCEL_KVM)
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_KVM, "KVM is not usable here: %s", why);
      return FALSE;
    }
  *ret_virt_type = g_strdup ("qemu");
  *ret_notice = g_strdup_printf ("KVM is not usable here (%s); using TCG", why);
  return TRUE;
}
