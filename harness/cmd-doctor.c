/* airlock doctor: what is installed and usable, and the fix for each missing
 * piece. */
#include "config.h"

#include "harness.h"


#include <errno.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
  int problems;
  gboolean storage_reported;   /* "guest files": once for both arches */
} Doctor;

static void
report (Doctor *d, gboolean ok, const char *what, const char *detail, const char *fix)
{
  printf ("%s %-22s %s\n", ok ? "  ok  " : "  FAIL", what, detail ? detail : "");
  if (!ok)
    {
      d->problems++;
      if (fix)
        printf ("       %-22s fix: %s\n", "", fix);
    }
}

static char *
first_line_of (const char *const *argv)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL)
      || !g_spawn_check_wait_status (status, NULL))
    return NULL;
  return g_strdup (g_strstrip (g_strdelimit (out, "\n", '\0')));
}

static void
check_qemu (Doctor *d, AirlockArch arch)
{
  const char *env = g_getenv (arch == AIRLOCK_ARCH_AMD64 ? "AIRLOCK_QEMU_X86_64" : "AIRLOCK_QEMU_AARCH64");
  const char *path = env && *env ? env : arch == AIRLOCK_ARCH_AMD64 ? AIRLOCK_QEMU_X86_64 : AIRLOCK_QEMU_AARCH64;
  const char *argv[] = { path, "--version", NULL };
  g_autofree char *version = g_file_test (path, G_FILE_TEST_IS_EXECUTABLE) ? first_line_of (argv) : NULL;
  g_autofree char *what = g_strdup_printf ("qemu (%s)", airlock_arch_to_string (arch));
  g_autofree char *detail = version ? g_strdup_printf ("%s: %s", path, version)
                                    : g_strdup_printf ("'%s' is missing or does not run", path);

  report (d, version != NULL, what, detail,
          arch == AIRLOCK_ARCH_AMD64 ? "apt-get install qemu-system-x86" : "apt-get install qemu-system-arm");
}

static void
check_guest_program (Doctor *d, AirlockArch arch)
{
  g_autofree char *path = g_strdup_printf ("%s/init-%s", airlock_guest_programs_dir (),
                                           airlock_arch_to_string (arch));
  g_autofree char *what = g_strdup_printf ("guest init (%s)", airlock_arch_to_string (arch));
  gboolean ok = g_file_test (path, G_FILE_TEST_IS_REGULAR);

  report (d, ok, what, path,
          "rebuild and reinstall airlock (the guest programs are part of its build), run a build "
          "tree's airlock as `meson devenv -C BUILD airlock …`, or set AIRLOCK_GUEST_DIR");
}

/* What the guest kernel offers the kernel-hook recorder, from its image:
 * without BTF and BPF LSM a run still records, by seccomp alone or with
 * kprobes that cannot refuse, and the report says which. */
static void
check_kernel_bpf (Doctor *d, AirlockArch arch, const AirlockGuestImage *image)
{
  g_autofree char *what = g_strdup_printf ("recorder hooks (%s)", airlock_arch_to_string (arch));
  g_autoptr (GError) error = NULL;
  AirlockKernelBpf bpf;

  if (!airlock_guest_image_read_kernel_bpf (image, &bpf, &error))
    report (d, FALSE, what, error->message, "airlock images build --force");
  else
    report (d, bpf == AIRLOCK_KERNEL_BPF_LSM, what, airlock_kernel_bpf_describe (bpf),
            "a guest kernel built with CONFIG_DEBUG_INFO_BTF=y and CONFIG_BPF_LSM=y, as "
            "Debian's is (images/guest/kernels.ini)");
}

static void
check_image_and_accel (Doctor *d, AirlockArch arch, const char *cache_dir, const char *uri)
{
  AirlockGuestImageOptions img_opts = { .cache_dir = cache_dir, .offline = TRUE };
  AirlockVmOptions vm_opts = { .uri = uri, .cache_dir = cache_dir, .accel = AIRLOCK_ACCEL_AUTO };
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *what = g_strdup_printf ("guest image (%s)", airlock_arch_to_string (arch));
  g_autofree char *accel_what = g_strdup_printf ("accelerator (%s)", airlock_arch_to_string (arch));
  g_autofree char *detail = NULL;
  g_autofree char *fix = g_strdup_printf ("airlock images build --arch %s", airlock_arch_to_string (arch));

  image = airlock_guest_image_ensure (arch, &img_opts, &error);
  if (!image)
    {
      /* A recipe or guest program airlock cannot read is its install's
       * problem (or a build tree's airlock run without meson devenv, which
       * looks for them where they would be installed): building the image
       * would fail the same way. */
      if (g_error_matches (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE)
          || g_error_matches (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM))
        {
          g_free (fix);
          fix = g_strdup ("reinstall airlock, run a build tree's airlock as "
                          "`meson devenv -C BUILD airlock doctor`, or set AIRLOCK_DATA_DIR and "
                          "AIRLOCK_GUEST_DIR (the message says which is missing)");
        }
      report (d, FALSE, what, error->message, fix);
      report (d, TRUE, accel_what, "not checked: it needs the guest image", NULL);
      return;
    }
  detail = g_strdup_printf ("%s; kernel sha256:%.16s… initramfs sha256:%.16s…", image->kernel_release,
                            image->kernel_sha256, image->initramfs_sha256);
  report (d, TRUE, what, detail, NULL);
  check_kernel_bpf (d, arch, image);

  vm = airlock_vm_new (arch, image, &vm_opts, &error);
  if (!vm)
    {
      report (d, FALSE, accel_what, error->message, NULL);
      return;
    }
  g_free (detail);
  detail = g_strdup_printf ("%s%s%s", airlock_vm_get_accel (vm),
                            airlock_vm_get_accel_notice (vm) ? ": " : "",
                            airlock_vm_get_accel_notice (vm) ? airlock_vm_get_accel_notice (vm) : "");
  report (d, TRUE, accel_what, detail, NULL);
  /* Once: both arches boot from the same hypervisor's storage. */
  if (!d->storage_reported)
    {
      g_autofree char *storage = NULL;
      gboolean ok = airlock_vm_describe_storage (vm, &storage);

      report (d, ok, "guest files", storage,
              ok ? NULL : "check the connection's rights on the hypervisor's storage pools");
      d->storage_reported = TRUE;
    }
}

/* The embedded connection loads libvirt's QEMU driver module in-process. */
static gboolean
has_qemu_driver (void)
{
  static const char *const dirs[] = {
    "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
  };

  for (unsigned i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *p = g_build_filename (dirs[i], "libvirt", "connection-driver",
                                             "libvirt_driver_qemu.so", NULL);
      if (g_file_test (p, G_FILE_TEST_EXISTS))
        return TRUE;
    }
  return FALSE;
}

int
cmd_doctor (int argc, char **argv)
{
  g_autofree char *uri = NULL;
  g_autofree char *cache_dir = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = NULL;
  Doctor d = { 0 };
  g_autofree char *libvirt_version = NULL;
  GOptionEntry entries[] = {
    { "connect", 'c', 0, G_OPTION_ARG_STRING, &uri, "libvirt URI to check (default: as airlock run would)", "URI" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "cache directory", "DIR" },
    { NULL },
  };

  ctx = g_option_context_new ("- check what airlock needs");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock doctor: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (!cache_dir)
    cache_dir = airlock_default_cache_dir ();

  printf ("airlock %s\n", AIRLOCK_VERSION);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    check_qemu (&d, (AirlockArch) a);

  libvirt_version = airlock_libvirt_library_version ();
  if (libvirt_version)
    {
      g_autofree char *v = g_strconcat ("library ", libvirt_version, NULL);
      report (&d, TRUE, "libvirt", v, NULL);
    }
  else
    report (&d, FALSE, "libvirt", "the library does not answer", "apt-get install libvirt0");
  {
    gboolean have_driver = has_qemu_driver ();
    const char *env = g_getenv ("AIRLOCK_CONNECT");
    if (!uri && !(env && *env))
      report (&d, have_driver, "libvirt qemu driver",
              have_driver ? "embedded driver available (no daemon needed)" : "the QEMU driver module is missing",
              "apt-get install libvirt-daemon-driver-qemu");
  }
  {
    g_autofree char *probe = g_build_filename (cache_dir, ".doctor-write-test", NULL);
    gboolean ok = g_mkdir_with_parents (cache_dir, 0700) == 0
                  && g_file_set_contents (probe, "", 0, NULL) && unlink (probe) == 0;
    report (&d, ok, "cache directory", cache_dir, "make it writable, or set AIRLOCK_CACHE_DIR");
  }
  if (access ("/dev/kvm", F_OK) == 0)
    report (&d, TRUE, "/dev/kvm", access ("/dev/kvm", R_OK | W_OK) == 0 ? "present, read-write" : "present, no access", NULL);
  else
    report (&d, TRUE, "/dev/kvm", "absent: guests run under TCG (slower, fully supported)", NULL);
  {
    g_autoptr (GError) net_error = NULL;
    gboolean ok = airlock_network_check (&net_error);

    report (&d, ok, "sinkhole network",
            ok ? "a private network namespace, its tap and nftables rules: ready"
               : net_error->message,
            "run as root, or allow unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1); the kernel needs tun and nf_tables");
  }
  {
    /* Every image's rootfs disk is built through libguestfs' appliance. */
    g_autoptr (GPtrArray) checks = airlock_disk_checks ("/boot", "/lib/modules");

    for (guint i = 0; i < checks->len; i++)
      {
        const AirlockDiskCheck *c = checks->pdata[i];

        report (&d, c->ok, c->what, c->detail, c->fix);
      }
  }
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    check_guest_program (&d, (AirlockArch) a);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    check_image_and_accel (&d, (AirlockArch) a, cache_dir, uri);

  if (d.problems)
    printf ("%d problem%s found\n", d.problems, d.problems == 1 ? "" : "s");
  else
    printf ("everything airlock needs is here\n");
  return d.problems ? HARNESS_EXIT_SETUP : HARNESS_EXIT_OK;
}
