/* floor-init: PID 1 of bench/boot's floor initramfs, for x86_64 and aarch64.
 *
 * The floor is what a boot costs with nothing of airlock in it: the same
 * kernel under bare QEMU, with an init that says it ran and powers off.
 * bench/boot times QEMU's spawn to the marker line below (the kernel booted
 * and ran init: the floor's "ready") and to QEMU's exit.
 *
 * Static, no GLib, no modules, no devices beyond the console.  If powering
 * off fails, exiting makes the kernel panic, which stops the VM too
 * (panic=-1 with -no-reboot); bench/boot then sees no clean exit.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

/* bench/boot matches this exact line on QEMU's serial output. */
#define FLOOR_MARKER "airlock-floor: init\n"

static int
open_console (void)
{
  int fd = open ("/dev/console", O_WRONLY | O_NOCTTY);

  if (fd >= 0 || errno != ENOENT)
    return fd;
  /* Debian's kernels unpack a built-in initramfs holding /dev/console before
   * ours; a kernel built with its own INITRAMFS_SOURCE may not. */
  (void) mkdir ("/dev", 0755);
  if (mount ("devtmpfs", "/dev", "devtmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") < 0)
    return -1;
  return open ("/dev/console", O_WRONLY | O_NOCTTY);
}

static void
write_all (int fd, const char *p, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;   /* nowhere to report it: bench/boot sees no marker */
      p += n;
      len -= (size_t) n;
    }
}

int
main (void)
{
  int fd = open_console ();

  /* fd 1 may still be the kernel's console when /dev/console could not be
   * opened here. */
  write_all (fd >= 0 ? fd : STDOUT_FILENO, FLOOR_MARKER, sizeof FLOOR_MARKER - 1);
  reboot (RB_POWER_OFF);
  _exit (1);
}
