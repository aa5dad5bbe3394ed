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
 * This file: step 1, the choice of the run, main() and the failure policy
 * below.  The rest has a file each: io.c (console, clocks, files),
 * cmdline.c (the kernel command line), modules.c (step 2), handshake.c
 * (steps 3 and 4: the ports, the guest's identity, the host hello),
 * channel.c (every frame sent, and the test modes acting on each) and
 * test-modes.c (the airlock.test= modes acting after the hello).
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

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "init.h"

/* ---- fatal errors ------------------------------------------------------ */

__attribute__ ((noreturn, format (printf, 1, 2))) void
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
        r = channel_send_trailer (0, AIRLOCK_END_ERROR,
                                  hooks_recorder (NULL) == AIRLOCK_RECORDER_KPROBE, hooks_lost ());
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
  uint32_t recorder = 0;
  char recorder_why[600] = "";
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
  /* The kernel-hook recorder, before the hello, which says what records
   * this boot's workloads.  Only for a supervised workload: the boot check
   * and a benchmark's unsupervised floor run none. */
  if (host.spec_length > 0 && cfg.test == TEST_HOOKS_OFF)
    {
      recorder = AIRLOCK_RECORDER_SECCOMP;
      snprintf (recorder_why, sizeof recorder_why, "test mode hooks-off");
    }
  else if (host.spec_length > 0 && cfg.test != TEST_UNSUPERVISED)
    {
      bool ring_min = cfg.test == TEST_HOOKS_RING_MIN || cfg.test == TEST_HOOKS_RING_STALL;

      recorder = hooks_start (ring_min, recorder_why, sizeof recorder_why) == 0
                   ? hooks_recorder (NULL) : AIRLOCK_RECORDER_SECCOMP;
      if (cfg.test == TEST_HOOKS_RING_STALL)
        hooks_hold ();
    }
  /* Before the hello: channel_send() saves and arms from its first frame on. */
  misbehaviour.replay_type = host.spec_length > 0 ? AIRLOCK_FRAME_EVENT : AIRLOCK_FRAME_HEARTBEAT;
  misbehaviour.panic_armed = cfg.test == TEST_PANIC_MID_RUN && host.spec_length == 0;
  r = channel_send_hello (&id, echoed_nonce, (uint32_t) second_errno, recorder);
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

  {
    char error[300];

    if (misbehave_after_hello (cfg.test, error, sizeof error) < 0)
      die ("test mode: %s", error);
  }

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
      if (cfg.test == TEST_HOOKS_RING_MIN)
        channel_logf ("TEST MODE: the kernel-hook recorder's ring is one page; a send to "
                      "port 53 cannot be recorded (the LSM hook must refuse it, the kprobe "
                      "count it lost)");
      if (cfg.test == TEST_HOOKS_RING_STALL)
        channel_logf ("TEST MODE: the kernel-hook recorder's ring is one page, read only at "
                      "the phase's end; connects fill it (the LSM hook must refuse the next, "
                      "the kprobe count it lost)");
      if (recorder == AIRLOCK_RECORDER_HOOKS)
        channel_logf ("recorder: kernel hooks (BPF LSM) for connect, bind, listen, accept, "
                      "sendto, sendmsg and writes on sockets; seccomp notification for the rest");
      else if (recorder == AIRLOCK_RECORDER_KPROBE)
        {
          const char *why;

          hooks_recorder (&why);
          channel_logf ("recorder: BPF kprobes on security_socket_sendmsg, _connect, _bind, _listen "
                        "and _accept for those calls and writes on sockets (this kernel "
                        "cannot attach the BPF LSM hooks: %s), which count a call they cannot "
                        "record as lost; seccomp notification for the rest", why);
        }
      else if (recorder == AIRLOCK_RECORDER_SECCOMP)
        channel_logf ("recorder: the kernel-hook recorder cannot run (%s); the supervisor "
                      "notifies write/writev, connect, bind, listen, accept, sendto and sendmsg itself", recorder_why);
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
  /* The kprobe recorder always says how many it lost; the LSM recorder
   * refuses a call it cannot record, but a connect's outcome that found the
   * ring full is lost on either, and is said too. */
  r = channel_send_trailer (result.exit_status, result.end_reason,
                            recorder == AIRLOCK_RECORDER_KPROBE || hooks_lost () > 0,
                            hooks_lost ());
  if (r < 0)
    die ("cannot send the trailer: %s", strerror (-r));
  console_log ("trailer sent after %llu heartbeat(s)",
               (unsigned long long) channel.heartbeats_sent);
  r = channel_await_receipt ();
  if (r < 0)
    console_log ("no receipt for the trailer: %s; powering off", strerror (-r));
  else
    console_log ("the host has the trailer; powering off");
  power_off ();
}
