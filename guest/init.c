/* airlock guest init: PID 1 of the guest initramfs, for x86_64 and aarch64.
 *
 * Trusted (DESIGN.md, threat model), static, no GLib.  Until the supervisor
 * exists it is the only program in the initramfs.  In order it:
 *
 *   1. mounts devtmpfs on /dev, proc on /proc, sysfs on /sys and points
 *      fds 0-2 at the console;
 *   2. loads the kernel modules listed in /lib/modules/load.list;
 *   3. finds and opens the evidence port, then proves it is exclusive by
 *      trying to open it a second time;
 *   4. waits for the host hello (the host speaks first) and answers with
 *      the guest hello;
 *   5. the run (run_boot_check(), which the supervisor replaces);
 *   6. sends the trailer and powers off.
 *
 * Failure policy (STYLE.md): PID 1 dies loudly rather than carrying on in an
 * unknown state.  A fatal error goes to the console and, once the host has
 * spoken, to the channel as a LOG frame and a TRAILER with END_REASON =
 * ERROR; then the VM powers off.  main() never returns: PID 1 exiting panics
 * the kernel, which is the last resort when powering off itself fails.
 *
 * Helpers return 0 or -errno; only main() and the run decide what is fatal.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <linux/module.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

#define LOG_PREFIX "airlock-init: "

#define MODULE_LIST "/lib/modules/load.list"
#define MODULE_LIST_MAX (64 * 1024)
#define VIRTIO_PORTS_DIR "/sys/class/virtio-ports"

/* Ports appear asynchronously (the port name arrives from the host in a
 * control message handled on a workqueue): poll, don't spin. */
#define POLL_INTERVAL_MS 10
#define PORT_WAIT_MS 10000
#define RUN_MS_DEFAULT 1000
#define BUILD_ID_MAX 64

/* Test-only misbehaviour, selected by airlock.test=MODE on the kernel
 * command line.  tests/vm uses these to prove the host detects each anomaly
 * the protocol defines.  They are not a way for the image to weaken the
 * evidence: the command line belongs to the host (it is part of the libvirt
 * domain the host defines), and nothing in the guest, trusted or not, can
 * change it after boot.  A mode this init does not know is a fatal error. */
enum test_mode {
  TEST_NONE,
  TEST_WRONG_NONCE,   /* flip one byte of the echoed nonce */
  TEST_SEQ_GAP,       /* after frame 2 (the boot check: its second heartbeat), skip
                       * one sequence number */
  TEST_OVERSIZE,      /* after hello, a header claiming MAX_PAYLOAD+1 bytes */
  TEST_UNKNOWN_TYPE,  /* after hello, a frame of type 99 */
  TEST_NO_HEARTBEAT,  /* after hello, silence until the host destroys the VM */
  TEST_NO_TRAILER,    /* heartbeat normally, power off without a trailer */
  TEST_PANIC,         /* after hello, crash the kernel */
  TEST_PANIC_MID_RUN, /* crash the kernel while the workload runs: at its second
                       * heartbeat after WORKLOAD_START of the workload phase (or
                       * its exit, if that comes first); the boot check: at its
                       * second heartbeat */
  TEST_GARBAGE,       /* after hello, random bytes instead of frames, then power off */
  TEST_REPLAY_FRAME,  /* the first EVENT frame (the boot check: the first heartbeat)
                       * is sent again, byte for byte with its own sequence number,
                       * before the next heartbeat or the trailer */
  TEST_STALE_NONCE,   /* stale-nonce=HEX: the hello echoes HEX (64 hex digits: a
                       * previous run's nonce, from its bundle's manifest) instead of
                       * this run's: the replay of a recorded session's hello */
  TEST_SKIP_CONTROL,  /* skip-control=NAME/FAMILY: the negative-control probe skips
                       * that control (the gate must then fail, naming it) */
  TEST_UNSUPERVISED,  /* benchmarks only: run the workload without the seccomp
                       * filter (the floor for bench/supervisor, and the only
                       * way strace can run); said in a LOG frame */
  TEST_UNKNOWN,       /* a mode this init does not know: fatal */
};

static const struct {
  const char *name;
  enum test_mode mode;
} test_mode_names[] = {
  { "wrong-nonce", TEST_WRONG_NONCE },
  { "seq-gap", TEST_SEQ_GAP },
  { "oversize", TEST_OVERSIZE },
  { "unknown-type", TEST_UNKNOWN_TYPE },
  { "no-heartbeat", TEST_NO_HEARTBEAT },
  { "no-trailer", TEST_NO_TRAILER },
  { "panic", TEST_PANIC },
  { "panic-mid-run", TEST_PANIC_MID_RUN },
  { "garbage", TEST_GARBAGE },
  { "replay-frame", TEST_REPLAY_FRAME },
  { "unsupervised", TEST_UNSUPERVISED },
};

#define TEST_FRAME_TYPE_UNKNOWN 99

/* What the host asked for on the kernel command line. */
struct boot_config {
  uint32_t run_ms;
  enum test_mode test;
  char test_name[96];
  char test_arg[80];   /* the value of a test mode that takes one */
  uint8_t stale_nonce[AIRLOCK_NONCE_LEN];   /* TEST_STALE_NONCE: test_arg decoded */
  /* A malformed command line is reported only once the host can hear it
   * (after the guest hello), so the host sees why the run failed. */
  char error[200];
};

/* What the guest hello says about this guest, gathered before the host
 * speaks so nothing between the two hellos can fail but the write. */
struct guest_identity {
  struct utsname uts;
  uint8_t build_id[BUILD_ID_MAX];
  size_t build_id_len;
};

struct host_hello {
  uint8_t magic[4];      /* as received, for the message when it is wrong */
  uint8_t version;
  uint32_t heartbeat_ms;
  uint32_t spec_length;  /* run spec bytes that followed the hello (0: boot check) */
  uint8_t nonce[AIRLOCK_NONCE_LEN];
};

/* The run spec, read right after the host hello. */
static uint8_t spec_bytes[AIRLOCK_SPEC_MAX];

/* The evidence channel.  Global because die() must be able to close the
 * stream from anywhere. */
struct channel {
  int fd;               /* the evidence port, -1 until opened */
  bool host_spoke;      /* a valid host hello arrived: the guest may write */
  uint64_t seq;         /* sequence number of the next frame */
  uint64_t frames_sent; /* equal to seq unless TEST_SEQ_GAP skipped one */
  uint64_t heartbeats_sent;
  uint64_t events_sent;
};

static struct channel channel = { .fd = -1 };

/* ---- console ---------------------------------------------------------- */

int
write_all (int fd, const void *buf, size_t len)
{
  const uint8_t *p = buf;

  while (len > 0)
    {
      ssize_t n = write (fd, p, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (n == 0)
        return -EIO;   /* would loop forever otherwise */
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

/* One line to the console (fd 2, see setup_console()); errors are ignored
 * because there is nowhere else to report them. */
void
console_log (const char *fmt, ...)
{
  char line[512];
  size_t len = sizeof LOG_PREFIX - 1;
  int saved_errno = errno;
  va_list ap;
  int n;

  memcpy (line, LOG_PREFIX, len);
  va_start (ap, fmt);
  n = vsnprintf (line + len, sizeof line - len - 1, fmt, ap);
  va_end (ap);
  if (n > 0)
    len += (size_t) n < sizeof line - len - 1 ? (size_t) n : sizeof line - len - 2;
  line[len++] = '\n';
  (void) write_all (STDERR_FILENO, line, len);
  errno = saved_errno;
}

/* The kernel opens fds 0-2 on the rootfs's /dev/console before running
 * init.  That node comes from the kernel's built-in default initramfs
 * (Debian's kernels have it), not from ours, which has no device nodes: a
 * kernel built with its own INITRAMFS_SOURCE can leave fds 0-2 closed.
 * Point them at devtmpfs's console either way, so the evidence port can
 * never become fd 1 or 2 and catch a stray diagnostic. */
static int
setup_console (void)
{
  int fd = open ("/dev/console", O_RDWR | O_NOCTTY);

  if (fd < 0)
    fd = open ("/dev/null", O_RDWR);
  if (fd < 0)
    return -errno;
  for (int i = 0; i <= 2; i++)
    if (fd != i && dup2 (fd, i) < 0)
      return -errno;
  if (fd > 2)
    close (fd);
  return 0;
}

/* ---- clocks ----------------------------------------------------------- */

uint64_t
clock_ns (clockid_t clock)
{
  struct timespec ts;

  /* Cannot fail for CLOCK_MONOTONIC / CLOCK_BOOTTIME with a valid pointer. */
  clock_gettime (clock, &ts);
  return (uint64_t) ts.tv_sec * NS_PER_S + (uint64_t) ts.tv_nsec;
}

/* Sleeps until @deadline_ns on CLOCK_MONOTONIC.  An absolute deadline, so
 * a schedule of deadlines does not drift by the time spent between them. */
void
sleep_until_ns (uint64_t deadline_ns)
{
  struct timespec ts = {
    .tv_sec = (time_t) (deadline_ns / NS_PER_S),
    .tv_nsec = (long) (deadline_ns % NS_PER_S),
  };

  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

void
sleep_ms (uint32_t ms)
{
  sleep_until_ns (clock_ns (CLOCK_MONOTONIC) + ms * NS_PER_MS);
}

/* ---- files ------------------------------------------------------------ */

/* Reads all of @path into @buf and NUL-terminates it.  Returns the length,
 * -EFBIG when it does not fit in @size - 1 bytes, or another -errno. */
ssize_t
read_file (const char *path, char *buf, size_t size)
{
  size_t len = 0;
  ssize_t r;
  char extra;
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return -errno;
  for (;;)
    {
      /* Once @buf is full, one more byte tells a file that fits exactly
       * from one that does not. */
      bool full = len == size - 1;
      ssize_t n = full ? read (fd, &extra, 1) : read (fd, buf + len, size - 1 - len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          r = -errno;
          break;
        }
      if (n == 0)
        {
          buf[len] = '\0';
          r = (ssize_t) len;
          break;
        }
      if (full)
        {
          r = -EFBIG;
          break;
        }
      len += (size_t) n;
    }
  close (fd);
  return r;
}

/* ---- power off and fatal errors --------------------------------------- */

static __attribute__ ((noreturn)) void
power_off (void)
{
  sync ();
  reboot (RB_POWER_OFF);
  /* Only reachable without CAP_SYS_BOOT, which PID 1 has.  Exiting makes
   * the kernel panic, which at least stops the VM (panic=-1, -no-reboot). */
  console_log ("cannot power off: %s; exiting so the kernel panics", strerror (errno));
  _exit (1);
}

static int channel_send_trailer (uint32_t exit_status, uint32_t end_reason);

static __attribute__ ((noreturn, format (printf, 1, 2))) void
die (const char *fmt, ...)
{
  char message[400];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (message, sizeof message, fmt, ap);
  va_end (ap);
  console_log ("fatal: %s", message);

  /* Only once the host has spoken: before that the host may not be
   * listening (and must not be spoken to first), and a bad host hello
   * means whoever is on the other end is not the airlock host.  The
   * senders never call die(), so this cannot recurse; if the channel is
   * what failed these writes fail too, and the host sees no trailer. */
  if (channel.fd >= 0 && channel.host_spoke)
    {
      int r = channel_send_log (message);

      if (r == 0)
        r = channel_send_trailer (0, AIRLOCK_END_ERROR);
      if (r < 0)
        console_log ("cannot report the error to the host: %s", strerror (-r));
    }
  power_off ();
}

/* ---- step 1: filesystems ---------------------------------------------- */

static int
mount_at (const char *fstype, const char *target, unsigned long flags, const char *options)
{
  if (mkdir (target, 0755) < 0 && errno != EEXIST)
    return -errno;
  if (mount (fstype, target, fstype, flags, options) < 0)
    return -errno;
  return 0;
}

/* The kernel starts init on its rootfs, which pivot_root(2) refuses to
 * leave ("the current root is on the rootfs").  Binding the rootfs onto
 * itself and moving that mount over "/" gives a root that is an ordinary
 * mount with a parent, same files, no copy: the supervisor can then
 * pivot_root the workload into its own root, out of sight of ours. */
static int
make_root_pivotable (void)
{
  if (mkdir ("/.root", 0700) < 0 && errno != EEXIST)
    return -errno;
  if (mount ("/", "/.root", NULL, MS_BIND, NULL) < 0)
    return -errno;
  if (chdir ("/.root") < 0)
    return -errno;
  if (mount (".", "/", NULL, MS_MOVE, NULL) < 0)
    return -errno;
  if (chroot (".") < 0)
    return -errno;
  if (chdir ("/") < 0)
    return -errno;
  (void) rmdir ("/.root");   /* no longer a mount point: just an empty dir */
  return 0;
}

/* ---- the kernel command line ------------------------------------------ */

/* Parses a decimal u32 with nothing around it. */
static int
parse_u32 (const char *s, uint32_t *ret)
{
  uint64_t v = 0;

  if (*s == '\0')
    return -EINVAL;
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9')
        return -EINVAL;
      v = v * 10 + (uint64_t) (*s - '0');
      if (v > UINT32_MAX)
        return -ERANGE;
    }
  *ret = (uint32_t) v;
  return 0;
}

/* Decodes exactly 2 * @len hex digits (either case) into @ret. */
static int
parse_hex (const char *s, uint8_t *ret, size_t len)
{
  if (strlen (s) != 2 * len)
    return -EINVAL;
  for (size_t i = 0; i < 2 * len; i++)
    {
      char c = s[i];
      int v = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

      if (v < 0)
        return -EINVAL;
      if (i % 2 == 0)
        ret[i / 2] = (uint8_t) (v << 4);
      else
        ret[i / 2] |= (uint8_t) v;
    }
  return 0;
}

/* Fills @cfg from /proc/cmdline.  Never fails: a problem is stored in
 * cfg->error for main() to report once the host can hear it. */
static void
read_boot_config (struct boot_config *cfg)
{
  static char cmdline[4096];
  char *save = NULL;
  ssize_t n;

  memset (cfg, 0, sizeof *cfg);
  cfg->run_ms = RUN_MS_DEFAULT;
  cfg->test = TEST_NONE;

  n = read_file ("/proc/cmdline", cmdline, sizeof cmdline);
  if (n < 0)
    {
      snprintf (cfg->error, sizeof cfg->error, "cannot read '/proc/cmdline': %s",
                strerror ((int) -n));
      return;
    }

  /* Whitespace-separated words; the keys we read never need quoting.  Later
   * words win, as the kernel's own parameters do. */
  for (char *word = strtok_r (cmdline, " \t\n", &save); word;
       word = strtok_r (NULL, " \t\n", &save))
    {
      if (strncmp (word, AIRLOCK_CMDLINE_RUN_MS, strlen (AIRLOCK_CMDLINE_RUN_MS)) == 0)
        {
          const char *value = word + strlen (AIRLOCK_CMDLINE_RUN_MS);

          if (parse_u32 (value, &cfg->run_ms) < 0)
            snprintf (cfg->error, sizeof cfg->error,
                      "invalid '%s%.32s': not a number of milliseconds",
                      AIRLOCK_CMDLINE_RUN_MS, value);
        }
      else if (strncmp (word, AIRLOCK_CMDLINE_TEST, strlen (AIRLOCK_CMDLINE_TEST)) == 0)
        {
          const char *value = word + strlen (AIRLOCK_CMDLINE_TEST);

          snprintf (cfg->test_name, sizeof cfg->test_name, "%s", value);
          cfg->test = TEST_UNKNOWN;
          for (size_t i = 0; i < sizeof test_mode_names / sizeof test_mode_names[0]; i++)
            if (strcmp (value, test_mode_names[i].name) == 0)
              cfg->test = test_mode_names[i].mode;
          if (strncmp (value, "skip-control=", strlen ("skip-control=")) == 0)
            {
              cfg->test = TEST_SKIP_CONTROL;
              snprintf (cfg->test_arg, sizeof cfg->test_arg, "%s", value + strlen ("skip-control="));
            }
          if (strncmp (value, "stale-nonce=", strlen ("stale-nonce=")) == 0)
            {
              snprintf (cfg->test_arg, sizeof cfg->test_arg, "%s", value + strlen ("stale-nonce="));
              if (parse_hex (cfg->test_arg, cfg->stale_nonce, sizeof cfg->stale_nonce) == 0)
                cfg->test = TEST_STALE_NONCE;
              else
                snprintf (cfg->error, sizeof cfg->error,
                          "invalid '%sstale-nonce=%.70s': not %d hex digits", AIRLOCK_CMDLINE_TEST,
                          cfg->test_arg, 2 * AIRLOCK_NONCE_LEN);
            }
        }
    }
}

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

enum module_phase { MODULES_FOR_PORT, MODULES_AFTER_HELLO };

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
static unsigned
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

/* ---- step 3: the evidence port ---------------------------------------- */

/* Looks once through VIRTIO_PORTS_DIR for the port named @name.  Returns 0
 * and fills @ret_dev with its /dev path, -ENOENT when it is not (yet)
 * there, or another -errno. */
static int
find_port (const char *name, char *ret_dev, size_t size)
{
  DIR *dir = opendir (VIRTIO_PORTS_DIR);
  struct dirent *de;
  int r = -ENOENT;

  if (!dir)
    return -errno;   /* ENOENT until virtio_console registers the class */
  while ((de = readdir (dir)))
    {
      char path[512], port_name[128];
      ssize_t n;

      if (de->d_name[0] == '.')
        continue;
      snprintf (path, sizeof path, VIRTIO_PORTS_DIR "/%s/name", de->d_name);
      /* "name" appears only once the host has named the port. */
      n = read_file (path, port_name, sizeof port_name);
      if (n <= 0)
        continue;
      if (port_name[n - 1] == '\n')
        port_name[n - 1] = '\0';
      if (strcmp (port_name, name) == 0)
        {
          if ((size_t) snprintf (ret_dev, size, "/dev/%s", de->d_name) >= size)
            r = -ENAMETOOLONG;
          else
            r = 0;
          break;
        }
    }
  closedir (dir);
  return r;
}

/* Waits up to PORT_WAIT_MS for the port named @name and its device node,
 * and opens it.  @ret_dev is filled as soon as the port is found, even if
 * opening it then fails, so the caller can say which step failed.  Returns
 * the fd, -ETIMEDOUT, or the -errno of a failed open. */
int
open_port (const char *name, char *ret_dev, size_t size)
{
  uint64_t deadline = clock_ns (CLOCK_MONOTONIC) + PORT_WAIT_MS * NS_PER_MS;

  ret_dev[0] = '\0';
  for (;;)
    {
      int r = find_port (name, ret_dev, size);

      if (r == 0)
        {
          /* Exclusive: virtio_console refuses a second open with EBUSY
           * while this fd is open, which is what keeps anything else in
           * the guest off the channel. */
          int fd = open (ret_dev, O_RDWR | O_CLOEXEC);

          if (fd >= 0)
            return fd;
          r = -errno;
        }
      /* The class directory, the name attribute and the device node each
       * appear a little later than the one before. */
      if (r != -ENOENT)
        return r;
      if (clock_ns (CLOCK_MONOTONIC) >= deadline)
        return -ETIMEDOUT;
      sleep_ms (POLL_INTERVAL_MS);
    }
}

/* ---- step 4: hellos --------------------------------------------------- */

static int
find_build_id_cb (struct dl_phdr_info *info, size_t size, void *data)
{
  struct guest_identity *id = data;

  /* Only this program: a static binary can still list the vDSO, which
   * carries the kernel's build id. */
  if ((uintptr_t) info->dlpi_phdr != (uintptr_t) getauxval (AT_PHDR))
    return 0;

  for (size_t i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      const uint8_t *p = (const uint8_t *) (info->dlpi_addr + ph->p_vaddr);
      size_t left = ph->p_memsz;
      size_t align = ph->p_align == 8 ? 8 : 4;

      if (ph->p_type != PT_NOTE)
        continue;
      while (left >= sizeof (ElfW (Nhdr)))
        {
          const ElfW (Nhdr) *note = (const void *) p;
          size_t name_size = (note->n_namesz + align - 1) & ~(align - 1);
          size_t desc_size = (note->n_descsz + align - 1) & ~(align - 1);
          size_t total = sizeof *note + name_size + desc_size;

          if (name_size > left || desc_size > left || total > left)
            break;
          if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == sizeof "GNU"
              && memcmp (p + sizeof *note, "GNU", sizeof "GNU") == 0
              && note->n_descsz > 0 && note->n_descsz <= sizeof id->build_id)
            {
              memcpy (id->build_id, p + sizeof *note + name_size, note->n_descsz);
              id->build_id_len = note->n_descsz;
              return 1;
            }
          p += total;
          left -= total;
        }
    }
  return 1;   /* this program has no build id: stop looking */
}

static int
read_guest_identity (struct guest_identity *id)
{
  memset (id, 0, sizeof *id);
  if (uname (&id->uts) < 0)
    return -errno;
  /* dl_iterate_phdr works in static glibc: it reports this program's own
   * program headers (from AT_PHDR), so no file needs to be read. */
  dl_iterate_phdr (find_build_id_cb, id);
  if (id->build_id_len == 0)
    return -ENODATA;
  return 0;
}

/* Reads exactly @len bytes of what the host sends.  Returns 0,
 * -ECONNRESET when the host left part way (@mid_message: the bytes continue
 * a message that already started), or the -errno of a failed read. */
static int
read_host_bytes (int fd, uint8_t *buf, size_t len, bool mid_message)
{
  uint64_t start = clock_ns (CLOCK_MONOTONIC);
  bool said_waiting = false;
  size_t got = 0;

  while (got < len)
    {
      ssize_t n = read (fd, buf + got, len - got);

      if (n > 0)
        {
          got += (size_t) n;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      /* virtio_console's read returns 0, instead of blocking, while no host
       * is connected to the port, and poll() then reports the port readable
       * (with POLLHUP).  So waiting for a host that has not connected yet
       * means polling; losing one mid-message means this run is over. */
      if (got > 0 || mid_message)
        return -ECONNRESET;
      if (!said_waiting && clock_ns (CLOCK_MONOTONIC) - start > NS_PER_S)
        {
          console_log ("waiting for the host to connect to the evidence port");
          said_waiting = true;
        }
      sleep_ms (POLL_INTERVAL_MS);
    }
  return 0;
}

/* Reads the 48-byte host hello and the run spec after it (into
 * spec_bytes).  The host speaks first; this blocks until all of it
 * arrived.  Returns 0, -EPROTO when it is not an airlock host hello of our
 * version (@ret then holds only the magic and version, for the message),
 * -EMSGSIZE when the spec is longer than AIRLOCK_SPEC_MAX, -ECONNRESET when
 * the host left mid-message, or the -errno of a failed read. */
static int
read_host_hello (int fd, struct host_hello *ret)
{
  uint8_t buf[AIRLOCK_HOST_HELLO_SIZE];
  int r;

  r = read_host_bytes (fd, buf, sizeof buf, false);
  if (r < 0)
    return r;

  memcpy (ret->magic, buf, sizeof ret->magic);
  ret->version = buf[offsetof (struct airlock_host_hello, version)];
  if (memcmp (ret->magic, AIRLOCK_HOST_HELLO_MAGIC, sizeof ret->magic) != 0
      || ret->version != AIRLOCK_PROTO_VERSION)
    return -EPROTO;
  /* flags and the reserved field are not checked: version 1 gives them no
   * meaning, so whatever they hold cannot change what this guest does. */
  ret->heartbeat_ms = wire_get_le32 (buf + offsetof (struct airlock_host_hello, heartbeat_ms));
  ret->spec_length = wire_get_le32 (buf + offsetof (struct airlock_host_hello, spec_length));
  memcpy (ret->nonce, buf + offsetof (struct airlock_host_hello, nonce), AIRLOCK_NONCE_LEN);
  if (ret->spec_length > AIRLOCK_SPEC_MAX)
    return -EMSGSIZE;
  /* The spec is part of the same message: the host already connected. */
  return read_host_bytes (fd, spec_bytes, ret->spec_length, true);
}

/* ---- frames ----------------------------------------------------------- */

static pthread_mutex_t channel_lock = PTHREAD_MUTEX_INITIALIZER;

/* The test modes that act inside channel_send(), because they must act
 * wherever a frame is sent from (the supervisor's threads included).  Like
 * every test mode they come from the host's kernel command line only:
 * @test is copied from it by main() before any other thread exists, so no
 * frame, spec or workload can switch one on.  The rest is under
 * channel_lock. */
struct channel_misbehaviour {
  enum test_mode test;
  bool gap_done;              /* TEST_SEQ_GAP */
  bool panic_armed;           /* TEST_PANIC_MID_RUN: the workload runs */
  unsigned panic_heartbeats;  /* heartbeats due since it was armed */
  uint8_t replay_type;        /* TEST_REPLAY_FRAME: EVENT with a spec, else HEARTBEAT */
  bool replayed;
  size_t replay_len;          /* 0 until the frame to replay was sent */
  uint8_t replay[AIRLOCK_FRAME_HEADER_SIZE + AIRLOCK_FRAME_MAX_PAYLOAD];
};

static struct channel_misbehaviour misbehaviour = { .test = TEST_NONE };

/* The u32 value of TLV @tag in frame @bytes (@len bytes, header included),
 * or -1 when it has none.  Only ever reads frames this init encoded. */
static int64_t
frame_get_u32 (const uint8_t *bytes, size_t len, uint16_t tag)
{
  size_t off = AIRLOCK_FRAME_HEADER_SIZE;

  while (off + AIRLOCK_TLV_HEADER_SIZE <= len)
    {
      uint16_t t = wire_get_le16 (bytes + off);
      uint16_t l = wire_get_le16 (bytes + off + 2);

      if (off + AIRLOCK_TLV_HEADER_SIZE + l > len)
        break;
      if (t == tag && l == 4)
        return wire_get_le32 (bytes + off + AIRLOCK_TLV_HEADER_SIZE);
      off += AIRLOCK_TLV_HEADER_SIZE + l;
    }
  return -1;
}

/* Crashes the kernel (sysrq-trigger works whatever kernel.sysrq says).
 * Returns only when that failed: never, then dies naming why. */
static __attribute__ ((noreturn)) void
crash_kernel (void)
{
  int fd = open ("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);

  if (fd < 0 || write (fd, "c", 1) != 1)
    die ("cannot crash the kernel through '/proc/sysrq-trigger': %s", strerror (errno));
  die ("the kernel did not crash after sysrq 'c'");
}

/* TEST_PANIC_MID_RUN: is the frame about to be sent the moment to crash?
 * The second heartbeat since the workload started, or its exit (or the
 * trailer) should that come first, so the crash never misses the run. */
static bool
panic_due (const uint8_t *bytes, size_t len)
{
  uint8_t type = bytes[5];

  if (!misbehaviour.panic_armed)
    return false;
  if (type == AIRLOCK_FRAME_HEARTBEAT)
    return ++misbehaviour.panic_heartbeats >= 2;
  return type == AIRLOCK_FRAME_TRAILER
         || (type == AIRLOCK_FRAME_EVENT
             && frame_get_u32 (bytes, len, AIRLOCK_TLV_EV_KIND) == AIRLOCK_EVENT_WORKLOAD_EXIT);
}

int
channel_send (struct wire_frame *f, uint64_t *ret_seq)
{
  size_t len = wire_end (f);
  uint8_t type = f->bytes[5];
  int r;

  if (len == 0)
    return -EMSGSIZE;
  pthread_mutex_lock (&channel_lock);
  if (misbehaviour.test == TEST_PANIC_MID_RUN && panic_due (f->bytes, len))
    {
      misbehaviour.panic_armed = false;   /* die() sends frames too */
      console_log ("test mode: crashing the kernel while the workload runs");
      pthread_mutex_unlock (&channel_lock);
      crash_kernel ();
    }
  if (misbehaviour.test == TEST_REPLAY_FRAME && misbehaviour.replay_len > 0
      && !misbehaviour.replayed
      && (type == AIRLOCK_FRAME_HEARTBEAT || type == AIRLOCK_FRAME_TRAILER))
    {
      /* The earlier frame again, byte for byte: its own (old) sequence
       * number, so only the sequence check can tell.  Not counted in
       * frames_sent, so the trailer's counts stay those of the honest
       * stream and the replay is the only anomaly. */
      misbehaviour.replayed = true;
      console_log ("test mode: sending an earlier frame again");
      r = write_all (channel.fd, misbehaviour.replay, misbehaviour.replay_len);
      if (r < 0)
        {
          pthread_mutex_unlock (&channel_lock);
          return r;
        }
    }
  wire_le64 (f->bytes + 8, channel.seq);
  r = write_all (channel.fd, f->bytes, len);
  if (r == 0)
    {
      if (ret_seq)
        *ret_seq = channel.seq;
      channel.seq++;
      channel.frames_sent++;
      if (type == AIRLOCK_FRAME_EVENT)
        channel.events_sent++;
      if (type == AIRLOCK_FRAME_HEARTBEAT)
        channel.heartbeats_sent++;

      /* Here rather than in a run, so the gap happens under the
       * supervisor as in the boot check; counted in frames, because a
       * supervised run can end before its second heartbeat. */
      if (misbehaviour.test == TEST_SEQ_GAP && !misbehaviour.gap_done
          && channel.frames_sent == 3)
        {
          channel.seq++;   /* the next frame's number is never sent */
          misbehaviour.gap_done = true;
        }
      if (misbehaviour.test == TEST_REPLAY_FRAME && misbehaviour.replay_len == 0
          && type == misbehaviour.replay_type)
        {
          memcpy (misbehaviour.replay, f->bytes, len);
          misbehaviour.replay_len = len;
        }
      if (misbehaviour.test == TEST_PANIC_MID_RUN && type == AIRLOCK_FRAME_EVENT
          && frame_get_u32 (f->bytes, len, AIRLOCK_TLV_EV_KIND) == AIRLOCK_EVENT_WORKLOAD_START
          && frame_get_u32 (f->bytes, len, AIRLOCK_TLV_EV_PHASE) == AIRLOCK_PHASE_WORKLOAD)
        misbehaviour.panic_armed = true;
    }
  pthread_mutex_unlock (&channel_lock);
  return r;
}

static int
channel_send_hello (const struct guest_identity *id, const uint8_t nonce[AIRLOCK_NONCE_LEN],
                    uint32_t second_open_errno)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_HELLO, channel.seq);
  wire_put (&f, AIRLOCK_TLV_NONCE, nonce, AIRLOCK_NONCE_LEN);
  wire_put_str (&f, AIRLOCK_TLV_ARCH, id->uts.machine);
  wire_put_str (&f, AIRLOCK_TLV_KERNEL_RELEASE, id->uts.release);
  wire_put (&f, AIRLOCK_TLV_BUILD_ID, id->build_id, id->build_id_len);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, clock_ns (CLOCK_BOOTTIME));
  wire_put_u32 (&f, AIRLOCK_TLV_SECOND_OPEN_ERRNO, second_open_errno);
  return channel_send (&f, NULL);
}

int
channel_send_heartbeat (void)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_HEARTBEAT, channel.seq);
  wire_put_u64 (&f, AIRLOCK_TLV_UPTIME_NS, clock_ns (CLOCK_BOOTTIME));
  return channel_send (&f, NULL);
}

int
channel_port (void)
{
  return channel.fd;
}

int
channel_send_log (const char *message)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_LOG, channel.seq);
  wire_put_str (&f, AIRLOCK_TLV_MESSAGE, message);
  return channel_send (&f, NULL);
}

void
channel_logf (const char *fmt, ...)
{
  char message[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (message, sizeof message, fmt, ap);
  va_end (ap);
  console_log ("%s", message);
  (void) channel_send_log (message);
}

static int
channel_send_trailer (uint32_t exit_status, uint32_t end_reason)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_TRAILER, channel.seq);
  /* Frames actually sent, not the trailer's seq: the two differ only under
   * TEST_SEQ_GAP, where an honest count leaves the gap itself as the only
   * anomaly for the host to find. */
  wire_put_u64 (&f, AIRLOCK_TLV_FRAME_COUNT, channel.frames_sent);
  wire_put_u64 (&f, AIRLOCK_TLV_HEARTBEAT_COUNT, channel.heartbeats_sent);
  wire_put_u64 (&f, AIRLOCK_TLV_EVENT_COUNT, channel.events_sent);
  wire_put_u32 (&f, AIRLOCK_TLV_EXIT_STATUS, exit_status);
  wire_put_u32 (&f, AIRLOCK_TLV_END_REASON, end_reason);
  return channel_send (&f, NULL);
}

/* ---- test modes acting right after the hello -------------------------- */

/* Returns only for modes that act later (or not at all). */
static void
misbehave_after_hello (enum test_mode test)
{
  switch (test)
    {
    case TEST_OVERSIZE:
      {
        /* A header whose length is one past the bound, then fewer bytes
         * than it claims: the host must reject it at the header, without
         * waiting for (or buffering) the payload it announces. */
        struct wire_frame f;
        int r;

        wire_begin (&f, AIRLOCK_FRAME_LOG, channel.seq);
        wire_le16 (f.bytes + 6, AIRLOCK_FRAME_MAX_PAYLOAD + 1);
        memset (f.bytes + AIRLOCK_FRAME_HEADER_SIZE, 'A', 64);
        r = write_all (channel.fd, f.bytes, AIRLOCK_FRAME_HEADER_SIZE + 64);
        if (r < 0)
          console_log ("cannot send the oversize frame: %s", strerror (-r));
        /* The stream cannot be framed after this: nothing more to say. */
        power_off ();
      }

    case TEST_UNKNOWN_TYPE:
      {
        /* Well formed in every other way, so the type is the only anomaly;
         * the run then goes on normally. */
        struct wire_frame f;
        int r;

        wire_begin (&f, TEST_FRAME_TYPE_UNKNOWN, channel.seq);
        wire_put_str (&f, AIRLOCK_TLV_MESSAGE, "test frame of an unknown type");
        r = channel_send (&f, NULL);
        if (r < 0)
          die ("cannot send the unknown-type frame: %s", strerror (-r));
        return;
      }

    case TEST_NO_HEARTBEAT:
      /* PID 1 ignores signals it has no handler for: this never returns,
       * and the host must notice the missing heartbeats and destroy us. */
      for (;;)
        pause ();

    case TEST_PANIC:
      crash_kernel ();

    case TEST_GARBAGE:
      {
        /* Bytes that are no frame at all, as a corrupted or hostile stream
         * would be: the host must stop where the next frame should start,
         * never buffer or resynchronise.  GRND_INSECURE: never blocks on an
         * entropy pool this early in boot (unpredictable enough for junk).
         * The first byte is never 'A', so it cannot start the magic. */
        uint8_t junk[4096];
        ssize_t n = getrandom (junk, sizeof junk, GRND_INSECURE);
        int r;

        if (n != (ssize_t) sizeof junk)
          {
            uint64_t x = clock_ns (CLOCK_MONOTONIC) | 1;

            for (size_t i = 0; i < sizeof junk; i++)
              {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                junk[i] = (uint8_t) x;
              }
          }
        if (junk[0] == 'A')
          junk[0] ^= 0x80;
        console_log ("test mode: sending %zu bytes of garbage", sizeof junk);
        r = write_all (channel.fd, junk, sizeof junk);
        if (r < 0)
          console_log ("cannot send the garbage: %s", strerror (-r));
        /* The stream cannot be framed after this: nothing more to say. */
        power_off ();
      }

    case TEST_NONE:
    case TEST_UNSUPERVISED:
    case TEST_SKIP_CONTROL:
    case TEST_WRONG_NONCE:
    case TEST_SEQ_GAP:
    case TEST_NO_TRAILER:
    case TEST_PANIC_MID_RUN:
    case TEST_REPLAY_FRAME:
    case TEST_STALE_NONCE:
    case TEST_UNKNOWN:
      return;
    }
}

/* ---- step 5: the run -------------------------------------------------- */

/* The run.  Until the supervisor exists there is no workload: this is the
 * boot check, which keeps heartbeats every @heartbeat_ms for cfg->run_ms
 * and ends COMPLETED.
 *
 * This is the function the supervisor replaces.  Its contract: called once,
 * right after the guest hello; keeps a heartbeat at least every
 * @heartbeat_ms; sends whatever frames it likes through channel_send*(),
 * which keep the counts; returns 0 and fills @ret, and main() sends the
 * trailer; or returns -errno, a fatal error main() reports as such. */
static int
run_boot_check (const struct boot_config *cfg, uint32_t heartbeat_ms, struct run_result *ret)
{
  uint64_t period = heartbeat_ms * NS_PER_MS;
  uint64_t start = clock_ns (CLOCK_MONOTONIC);
  uint64_t end = start + cfg->run_ms * NS_PER_MS;
  uint64_t next = start + period;

  /* Deadlines on a fixed grid from the start: each sleep is absolute, so
   * the time spent sending does not add up into drift. */
  while (next <= end)
    {
      uint64_t now;
      int r;

      sleep_until_ns (next);
      r = channel_send_heartbeat ();
      if (r < 0)
        return r;

      next += period;
      /* A write stalled longer than a period (the host stopped reading, the
       * vCPU was descheduled): skip the missed grid points rather than
       * sending a burst of heartbeats that would prove nothing. */
      now = clock_ns (CLOCK_MONOTONIC);
      if (now > next)
        next += ((now - next) / period + 1) * period;
    }
  sleep_until_ns (end);

  ret->exit_status = 0;
  ret->end_reason = AIRLOCK_END_COMPLETED;
  return 0;
}

/* ---- main ------------------------------------------------------------- */

int
main (int argc, char **argv)
{
  struct boot_config cfg;
  struct guest_identity id;
  struct host_hello host = { .heartbeat_ms = 0 };
  struct run_result result;
  uint8_t echoed_nonce[AIRLOCK_NONCE_LEN];
  char dev[300];
  int second_fd, second_errno;
  unsigned module_failures;
  uint64_t t;
  int r;

  /* Everything below mounts, loads modules and powers the machine off. */
  if (getpid () != 1)
    {
      fprintf (stderr, LOG_PREFIX "refusing to run as pid %ld: this is the guest's PID 1\n",
               (long) getpid ());
      return 1;
    }

  umask (022);
  if (chdir ("/") < 0)
    die ("cannot change to '/': %s", strerror (errno));
  r = make_root_pivotable ();
  if (r < 0)
    die ("cannot make '/' a bind mount: %s", strerror (-r));

  /* 1. Filesystems.  Until setup_console() fd 2 may be closed, so a
   * failure to mount /dev may show only as a power-off with no hello. */
  r = mount_at ("devtmpfs", "/dev", MS_NOSUID | MS_NOEXEC, "mode=0755");
  if (r < 0)
    die ("cannot mount devtmpfs on '/dev': %s", strerror (-r));
  r = setup_console ();
  if (r < 0)
    die ("cannot open '/dev/console': %s", strerror (-r));
  r = mount_at ("proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  if (r < 0)
    die ("cannot mount proc on '/proc': %s", strerror (-r));
  r = mount_at ("sysfs", "/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  if (r < 0)
    die ("cannot mount sysfs on '/sys': %s", strerror (-r));

  r = read_guest_identity (&id);
  if (r < 0)
    die ("cannot describe this guest (uname, build id): %s", strerror (-r));
  read_boot_config (&cfg);
  misbehaviour.test = cfg.test;
  console_log ("started on %s %s; run_ms=%u%s%s", id.uts.machine, id.uts.release,
               cfg.run_ms, cfg.test != TEST_NONE ? "; TEST MODE " : "", cfg.test_name);

  /* 2. The modules the evidence port needs; the rest follow the hello. */
  module_failures = load_modules (MODULES_FOR_PORT);

  /* 3. The evidence port, and the proof that it is exclusive. */
  t = clock_ns (CLOCK_MONOTONIC);
  channel.fd = open_port (AIRLOCK_PORT_EVIDENCE, dev, sizeof dev);
  if (channel.fd < 0 && dev[0] == '\0')
    die ("evidence port '%s' did not appear within %u ms (%u module(s) failed to load)",
         AIRLOCK_PORT_EVIDENCE, PORT_WAIT_MS, module_failures);
  if (channel.fd < 0)
    die ("cannot open evidence port '%s' at '%s': %s", AIRLOCK_PORT_EVIDENCE, dev,
         strerror (-channel.fd));

  /* Right after the first open, so nothing could have opened it in between.
   * Should the second open succeed, its fd stays open until the hello is
   * out: closing a virtio port tells the host the guest disconnected, which
   * would lose the very hello that reports errno 0. */
  second_fd = open (dev, O_RDWR | O_CLOEXEC);
  second_errno = second_fd < 0 ? errno : 0;
  console_log ("evidence port is '%s' (found after %llu ms); second open: %s", dev,
               (unsigned long long) ((clock_ns (CLOCK_MONOTONIC) - t) / NS_PER_MS),
               second_errno ? strerror (second_errno) : "succeeded (NOT exclusive)");

  /* 4. The host speaks first. */
  r = read_host_hello (channel.fd, &host);
  if (r == -EPROTO)
    die ("the host hello on '%s' is not airlock's (magic %02x%02x%02x%02x version %u, "
         "want '%s' version %u)", dev, host.magic[0], host.magic[1], host.magic[2],
         host.magic[3], host.version, AIRLOCK_HOST_HELLO_MAGIC, AIRLOCK_PROTO_VERSION);
  if (r == -EMSGSIZE)
    die ("the host's run spec is %u bytes, more than the %u this guest reads", host.spec_length,
         AIRLOCK_SPEC_MAX);
  if (r < 0)
    die ("cannot read the host hello on '%s': %s", dev, strerror (-r));
  channel.host_spoke = true;

  memcpy (echoed_nonce, host.nonce, AIRLOCK_NONCE_LEN);
  if (cfg.test == TEST_WRONG_NONCE)
    echoed_nonce[0] ^= 0xff;
  if (cfg.test == TEST_STALE_NONCE)
    memcpy (echoed_nonce, cfg.stale_nonce, AIRLOCK_NONCE_LEN);
  /* Before the hello: channel_send() saves and arms from its first frame on. */
  misbehaviour.replay_type = host.spec_length > 0 ? AIRLOCK_FRAME_EVENT : AIRLOCK_FRAME_HEARTBEAT;
  misbehaviour.panic_armed = cfg.test == TEST_PANIC_MID_RUN && host.spec_length == 0;
  r = channel_send_hello (&id, echoed_nonce, (uint32_t) second_errno);
  if (r < 0)
    die ("cannot send the hello: %s", strerror (-r));
  if (second_fd >= 0)
    close (second_fd);
  console_log ("hello sent; heartbeat every %u ms", host.heartbeat_ms);

  /* Problems found before the host could hear them. */
  if (cfg.error[0])
    die ("%s", cfg.error);
  if (cfg.test == TEST_UNKNOWN)
    die ("unknown test mode '%s%s'", AIRLOCK_CMDLINE_TEST, cfg.test_name);
  if (host.heartbeat_ms == 0)
    die ("the host asked for heartbeats every 0 ms");

  misbehave_after_hello (cfg.test);

  /* The remaining modules, before anything runs that could need them. */
  if (load_modules (MODULES_AFTER_HELLO) > 0)
    channel_send_log ("some kernel modules failed to load after the hello; see the console log");

  /* 5. The run: the workload under the supervisor when the host sent a
   * spec, the boot check otherwise. */
  if (host.spec_length > 0)
    {
      char error[400] = "";

      if (cfg.test == TEST_UNSUPERVISED)
        channel_logf ("TEST MODE: the workload runs without the seccomp filter; "
                      "nothing it does is recorded");
      if (cfg.test == TEST_SKIP_CONTROL)
        channel_logf ("TEST MODE: the negative-control probe skips %s", cfg.test_arg);
      r = supervisor_run (spec_bytes, host.spec_length, host.heartbeat_ms,
                          cfg.test != TEST_UNSUPERVISED,
                          cfg.test == TEST_SKIP_CONTROL ? cfg.test_arg : NULL, &result, error,
                          sizeof error);
      if (r < 0)
        die ("the supervisor failed: %s", error[0] ? error : strerror (-r));
    }
  else
    {
      r = run_boot_check (&cfg, host.heartbeat_ms, &result);
      if (r < 0)
        die ("the run failed: %s", strerror (-r));
    }

  if (cfg.test == TEST_NO_TRAILER)
    {
      console_log ("test mode: powering off without a trailer");
      power_off ();
    }

  /* 6. The trailer. */
  r = channel_send_trailer (result.exit_status, result.end_reason);
  if (r < 0)
    die ("cannot send the trailer: %s", strerror (-r));
  console_log ("trailer sent after %llu heartbeat(s); powering off",
               (unsigned long long) channel.heartbeats_sent);
  power_off ();
}
