/* Whether this host can build rootfs disks (image.h, airlock_disk_checks). */
#define _GNU_SOURCE /* strverscmp */

#include "config.h"

#include "image/image.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void
airlock_disk_check_free (AirlockDiskCheck *check)
{
  if (!check)
    return;
  g_free (check->what);
  g_free (check->detail);
  g_free (check->fix);
  g_free (check);
}

static void
add (GPtrArray *checks, const char *what, gboolean ok, char *detail, const char *fix)
{
  AirlockDiskCheck *c = g_new0 (AirlockDiskCheck, 1);

  c->what = g_strdup (what);
  c->ok = ok;
  c->detail = detail;
  c->fix = ok || !fix ? NULL : g_strdup (fix);
  g_ptr_array_add (checks, c);
}

/* A directory of $LIBGUESTFS_PATH holding a fixed appliance (kernel,
 * initrd, root): libguestfs then boots it and needs neither supermin nor
 * the host's kernel.  Transfer full, or NULL. */
static char *
fixed_appliance (void)
{
  const char *path = g_getenv ("LIBGUESTFS_PATH");
  g_auto (GStrv) dirs = NULL;

  if (!path || !*path)
    return NULL;
  dirs = g_strsplit (path, ":", -1);
  for (guint i = 0; dirs[i]; i++)
    {
      g_autofree char *kernel = g_build_filename (dirs[i], "kernel", NULL);
      g_autofree char *initrd = g_build_filename (dirs[i], "initrd", NULL);
      g_autofree char *root = g_build_filename (dirs[i], "root", NULL);

      if (*dirs[i] && g_file_test (kernel, G_FILE_TEST_EXISTS)
          && g_file_test (initrd, G_FILE_TEST_EXISTS) && g_file_test (root, G_FILE_TEST_EXISTS))
        return g_strdup (dirs[i]);
    }
  return NULL;
}

static gint
version_cmp (gconstpointer a, gconstpointer b)
{
  return strverscmp (*(const char *const *) a, *(const char *const *) b);
}

/* The kernel supermin takes: the newest vmlinuz-VERSION of @boot_dir that
 * has its modules, else the newest of any.  Transfer full, or NULL. */
static char *
host_kernel (const char *boot_dir, const char *modules_dir)
{
  g_autoptr (GDir) dir = g_dir_open (boot_dir, 0, NULL);
  g_autoptr (GPtrArray) versions = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  const char *chosen = NULL;

  if (!dir)
    return NULL;
  while ((name = g_dir_read_name (dir)))
    if (g_str_has_prefix (name, "vmlinuz-") && name[strlen ("vmlinuz-")])
      g_ptr_array_add (versions, g_strdup (name + strlen ("vmlinuz-")));
  if (versions->len == 0)
    return NULL;
  g_ptr_array_sort (versions, version_cmp);
  for (guint i = versions->len; i-- > 0 && !chosen;)
    {
      g_autofree char *mods = g_build_filename (modules_dir, versions->pdata[i], NULL);

      if (g_file_test (mods, G_FILE_TEST_IS_DIR))
        chosen = versions->pdata[i];
    }
  if (!chosen)
    chosen = versions->pdata[versions->len - 1];
  return g_strdup_printf ("%s/vmlinuz-%s", boot_dir, chosen);
}

/* Opens and reads a byte of @path as this process: access() would answer
 * for the real uid, and a mode alone says nothing of ACLs. */
static int
read_error (const char *path)
{
  char byte;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  int err = 0;

  if (fd < 0)
    return errno;
  if (read (fd, &byte, 1) < 0)
    err = errno;
  close (fd);
  return err;
}

GPtrArray *
airlock_disk_checks (const char *boot_dir, const char *modules_dir)
{
  GPtrArray *checks = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_disk_check_free);
  g_autofree char *appliance = fixed_appliance ();
  g_autofree char *supermin = NULL;
  g_autofree char *kernel = NULL;
  const char *env_kernel = g_getenv ("SUPERMIN_KERNEL");
  void *handle;
  int err;

  /* What disk.c loads; its constructor initialises libvirt, whose log the
   * library pointed at the cache before main().  Kept loaded, as disk.c
   * keeps it: unloading it would lose what its constructor allocated
   * (LeakSanitizer: 48 bytes in an unknown module, every `airlock doctor`)
   * and buys nothing. */
  handle = dlopen ("libguestfs.so.0", RTLD_LAZY | RTLD_LOCAL);
  add (checks, "libguestfs", handle != NULL,
       handle ? g_strdup ("libguestfs.so.0 loads (rootfs disks are built with it)")
              : g_strdup_printf ("libguestfs.so.0 cannot be loaded: %s", dlerror ()),
       "apt-get install libguestfs0");

  if (appliance)
    {
      add (checks, "libguestfs appliance", TRUE,
           g_strdup_printf ("fixed appliance in '%s' (LIBGUESTFS_PATH): supermin and the host "
                            "kernel are not needed", appliance), NULL);
      return checks;
    }
  supermin = g_find_program_in_path ("supermin");
  add (checks, "supermin", supermin != NULL,
       supermin ? g_strdup_printf ("%s (builds libguestfs' appliance from the host's kernel and "
                                   "packages, once, into its cache)", supermin)
                : g_strdup ("not in PATH: libguestfs cannot build its appliance"),
       "apt-get install supermin (or give libguestfs a fixed appliance: LIBGUESTFS_PATH)");

  if (env_kernel && *env_kernel)
    kernel = g_strdup (env_kernel);
  else
    kernel = host_kernel (boot_dir, modules_dir);
  if (!kernel)
    {
      add (checks, "host kernel", FALSE,
           g_strdup_printf ("no %s/vmlinuz-* for supermin to build the appliance from", boot_dir),
           "install a kernel package (linux-image-amd64), or point SUPERMIN_KERNEL at a kernel "
           "and SUPERMIN_MODULES at its modules");
      return checks;
    }
  err = read_error (kernel);
  if (err == 0)
    add (checks, "host kernel", TRUE,
         g_strdup_printf ("%s is readable (the appliance boots it)%s", kernel,
                          env_kernel && *env_kernel ? " (SUPERMIN_KERNEL)" : ""), NULL);
  else
    {
      g_autofree char *fix = NULL;

      if (env_kernel && *env_kernel)
        fix = g_strdup ("point SUPERMIN_KERNEL at a kernel this user can read, or unset it");
      else if (err == EACCES || err == EPERM)
        /* Ubuntu installs kernels 0600; a statoverride keeps the next
         * kernel package from undoing the chmod. */
        fix = g_strdup_printf ("sudo chmod 0644 %s/vmlinuz-* (and, so kernel updates keep it: "
                               "sudo dpkg-statoverride --update --add root root 0644 %s), or "
                               "point SUPERMIN_KERNEL at a readable copy", boot_dir, kernel);
      else
        fix = g_strdup ("reinstall the kernel package, or point SUPERMIN_KERNEL at a readable "
                        "kernel");
      add (checks, "host kernel", FALSE,
           g_strdup_printf ("cannot read %s: %s: libguestfs cannot build its appliance, so no "
                            "image's disk can be built%s", kernel, g_strerror (err),
                            env_kernel && *env_kernel ? " (SUPERMIN_KERNEL)" : ""),
           fix);
    }
  return checks;
}
