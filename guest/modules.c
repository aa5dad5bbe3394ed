/* Step 2 of the boot: the kernel modules of /lib/modules/load.list,
 * the evidence port's before the hello, the rest right after it. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/module.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"

#define MODULE_LIST "/lib/modules/load.list"
#define MODULE_LIST_MAX (64 * 1024)

/* ---- step 2: kernel modules ------------------------------------------- */

static bool
ends_with (const char *s, const char *suffix)
{
  size_t ls = strlen (s), lx = strlen (suffix);

  return ls >= lx && strcmp (s + ls - lx, suffix) == 0;
}

static int
load_module (const char *path)
{
  unsigned flags = 0;
  int fd, r;

  /* Kernels built with CONFIG_MODULE_DECOMPRESS (Ubuntu's .ko.zst) take
   * compressed files; Debian's 6.1 ships plain .ko and rejects the flag,
   * which is then logged as this module's failure. */
  if (ends_with (path, ".ko.xz") || ends_with (path, ".ko.zst") || ends_with (path, ".ko.gz"))
    flags |= MODULE_INIT_COMPRESSED_FILE;

  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  r = syscall (SYS_finit_module, fd, "", flags) < 0 ? -errno : 0;
  close (fd);
  return r == -EEXIST ? 0 : r;
}

/* Modules the evidence port needs.  They load before the hello; the rest
 * (network, block, filesystems) load right after it, so the host's
 * boot-to-ready does not wait for modules the handshake does not use. */
static const char *const port_modules[] = {
  "virtio", "virtio_ring", "virtio_pci_modern_dev", "virtio_pci_legacy_dev",
  "virtio_pci", "virtio_console",
};


/* Is the module at @path (".../name.ko[.xz|.zst|.gz]") one the port needs? */
static bool
is_port_module (const char *path)
{
  const char *base = strrchr (path, '/') ? strrchr (path, '/') + 1 : path;
  size_t len = strcspn (base, ".");

  for (size_t i = 0; i < sizeof port_modules / sizeof port_modules[0]; i++)
    if (strlen (port_modules[i]) == len && strncmp (base, port_modules[i], len) == 0)
      return true;
  return false;
}

/* Loads the modules of MODULE_LIST that belong to @phase, in list order
 * (the list is already in dependency order, and the port's modules depend
 * on nothing else in it; paths are relative to the initramfs root).  A
 * failure is logged and not fatal here: whether it mattered shows when the
 * evidence port does or does not appear.  Returns the number of failures. */
unsigned
load_modules (enum module_phase phase)
{
  static char list[MODULE_LIST_MAX];
  unsigned loaded = 0, failed = 0;
  char *save = NULL;
  ssize_t n;

  n = read_file (MODULE_LIST, list, sizeof list);
  if (n == -ENOENT)
    {
      if (phase == MODULES_FOR_PORT)
        console_log ("no '%s': loading no modules", MODULE_LIST);
      return 0;
    }
  if (n < 0)
    {
      console_log ("cannot read '%s': %s", MODULE_LIST, strerror ((int) -n));
      return 1;
    }

  for (char *line = strtok_r (list, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      int r;

      line[strcspn (line, "\r")] = '\0';
      if (line[0] == '\0' || line[0] == '#')
        continue;
      if (is_port_module (line) != (phase == MODULES_FOR_PORT))
        continue;
      r = load_module (line);
      if (r < 0)
        {
          console_log ("cannot load module '%s': %s", line, strerror (-r));
          failed++;
        }
      else
        loaded++;
    }
  console_log ("loaded %u module(s) %s, %u failed", loaded,
               phase == MODULES_FOR_PORT ? "for the evidence port" : "after the hello", failed);
  return failed;
}

