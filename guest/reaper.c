/* The reaper: pid 1 of the workload's pid namespace (supervisor.c draws
 * the process layout).  It makes the workload's root (rootfs.c), resolves
 * the image's user, installs the seccomp filter and hands its listener to
 * PID 1, forks the entrypoint (credentials and capabilities dropped, the
 * spec's argv, env and cwd), reports how its execve went, and reaps until
 * no process is left in the namespace.  It runs nothing from the image. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "filter.h"
#include "image-files.h"
#include "reaper.h"
#include "run-spec.h"
#include "workload.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* ---- the image's user ------------------------------------------------------ */

/* Resolves the image's User the way container runtimes do: "name" or "uid",
 * optionally ":group" or ":gid"; names through the workload root's
 * /etc/passwd and /etc/group; a named user's gid and supplementary groups
 * from those files, a bare uid gets gid 0... unless passwd knows it. */
static int
resolve_user (struct run_spec *spec, char *error, size_t error_size)
{
  static char passwd[256 * 1024], group[256 * 1024], copy[256 * 1024];
  ssize_t passwd_len = read_file ("/etc/passwd", passwd, sizeof passwd);
  ssize_t group_len = read_file ("/etc/group", group, sizeof group);

  /* A file too large for our bound is not a missing one: say which, so the
   * verdict's reason is one a person can act on. */
  if (passwd_len < 0 && passwd_len != -ENOENT)
    return fail (error, error_size, "user '%s': cannot read the image's /etc/passwd: %s",
                 spec->user, passwd_len == -EFBIG ? "it is over 256 KiB"
                 : passwd_len == -EFTYPE_NOT_REGULAR ? "it is not a regular file"
                 : strerror ((int) -passwd_len));
  if (group_len < 0 && group_len != -ENOENT)
    return fail (error, error_size, "user '%s': cannot read the image's /etc/group: %s",
                 spec->user, group_len == -EFBIG ? "it is over 256 KiB"
                 : group_len == -EFTYPE_NOT_REGULAR ? "it is not a regular file"
                 : strerror ((int) -group_len));

  return resolve_user_in (spec, passwd_len >= 0 ? passwd : NULL, group_len >= 0 ? group : NULL,
                          copy, sizeof copy, error, error_size);
}

/* ---- the reaper ----------------------------------------------------------- */

/* Docker's default capability set (moby oci/caps/defaults.go): what images
 * expect to have as root.  Everything else leaves the bounding set, so no
 * process of the workload can load modules, mount, trace or reach raw I/O,
 * setuid binaries included.
 *
 * Less CAP_MKNOD: Docker pairs it with a devices cgroup that lets a
 * container open only a handful of nodes; there is none here, so a node
 * made with it would open any device of the guest — the serial console
 * and kernel log (forged lines in the bundle's console.log), the image
 * disk, the virtio-serial ports (tests/hostile: evidence-port,
 * forge-frames, disk-write).  The nodes a workload needs are made for it
 * in its /dev; a node its image's layers bring opens nothing (its root is
 * mounted nodev, rootfs.c: image-nodes). */
static const int default_caps[] = {
  CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FSETID, CAP_FOWNER, CAP_NET_RAW,
  CAP_SETGID, CAP_SETUID, CAP_SETFCAP, CAP_SETPCAP, CAP_NET_BIND_SERVICE,
  CAP_SYS_CHROOT, CAP_KILL, CAP_AUDIT_WRITE,
};

static bool
is_default_cap (int cap)
{
  for (size_t i = 0; i < sizeof default_caps / sizeof default_caps[0]; i++)
    if (default_caps[i] == cap)
      return true;
  return false;
}

static int
drop_capabilities (bool root)
{
  struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
  struct __user_cap_data_struct data[2] = { { 0 } };

  for (int cap = 0; cap <= 63; cap++)
    {
      if (is_default_cap (cap))
        continue;
      if (prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    }
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    return -errno;
  if (!root)
    return 0;   /* setresuid to a non-zero uid clears the sets */
  for (size_t i = 0; i < sizeof default_caps / sizeof default_caps[0]; i++)
    {
      int cap = default_caps[i];
      data[cap / 32].effective |= 1u << (cap % 32);
      data[cap / 32].permitted |= 1u << (cap % 32);
    }
  if (syscall (SYS_capset, &hdr, data) < 0)
    return -errno;
  return 0;
}

static const char *
spec_getenv (const struct run_spec *spec, const char *name)
{
  size_t len = strlen (name);

  for (size_t i = 0; i < spec->envc; i++)
    if (strncmp (spec->envp[i], name, len) == 0 && spec->envp[i][len] == '=')
      return spec->envp[i] + len + 1;
  return NULL;
}

static void __attribute__ ((format (printf, 1, 2)))
entry_error (const char *fmt, ...)
{
  char line[600];
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (line, sizeof line - 1, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  if ((size_t) n > sizeof line - 2)
    n = (int) sizeof line - 2;
  line[n++] = '\n';
  (void) write_all (STDERR_FILENO, line, (size_t) n);
}

/* The entrypoint gives up before its execve: why goes to the handoff (for
 * the WORKLOAD_EXEC event) and to its stderr (for the person reading the
 * output).  @err is an errno value. */
static __attribute__ ((noreturn, format (printf, 4, 5))) void
entry_fail (struct handoff *h, int err, int status, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (h->exec_note, sizeof h->exec_note, fmt, ap);
  va_end (ap);
  h->exec_errno = err;
  __atomic_store_n (&h->exec_failed, 1, __ATOMIC_RELEASE);
  entry_error ("airlock: %s", h->exec_note);
  _exit (status);
}

static void
entry_exec (struct handoff *h, const char *path, const struct run_spec *spec)
{
  snprintf (h->exec_path, sizeof h->exec_path, "%s", path);
  execve (path, spec->argv, spec->envp);
}

/* The entrypoint process, after the reaper's fork: credentials, stdio,
 * cwd, then execve of argv[0] (searched in the spec's PATH when it has no
 * '/', as container runtimes do).  @report_fd is the write end of the
 * reaper's close-on-exec pipe: it must stay open until the execve. */
static __attribute__ ((noreturn)) void
run_entrypoint (const struct run_spec *spec, struct handoff *h, int report_fd, int in_fd,
                int out_fd, int err_fd)
{
  int r, exec_errno = ENOENT;

  snprintf (h->exec_path, sizeof h->exec_path, "%s", spec->argv[0]);
  if (setsid () < 0)
    entry_fail (h, errno, 126, "cannot start a session: %s", strerror (errno));
  /* A terminal: ours to control (its line discipline then sends ^C's
   * SIGINT to our foreground process group) and owned by the workload's
   * user, as login does, while we still may chown. */
  if (spec->tty && (ioctl (in_fd, TIOCSCTTY, 0) < 0
                    || fchown (in_fd, spec->uid, spec->gid) < 0))
    entry_fail (h, errno, 126, "cannot take the terminal: %s", strerror (errno));
  if (in_fd < 0)
    in_fd = open ("/dev/null", O_RDONLY);
  if (in_fd < 0 || dup2 (in_fd, 0) < 0 || dup2 (out_fd, 1) < 0 || dup2 (err_fd, 2) < 0)
    entry_fail (h, errno, 126, "cannot set up stdio: %s", strerror (errno));
  /* The report pipe at 3, everything else above it closed. */
  if (report_fd != 3 && syscall (SYS_dup3, report_fd, 3, O_CLOEXEC) < 0)
    entry_fail (h, errno, 126, "cannot keep the exec report pipe: %s", strerror (errno));
  if (syscall (SYS_close_range, 4, ~0u, 0) < 0)
    entry_fail (h, errno, 126, "cannot close inherited fds: %s", strerror (errno));

  if ((r = drop_capabilities (spec->uid == 0)) < 0)
    entry_fail (h, -r, 126, "cannot drop capabilities: %s", strerror (-r));
  if (setgroups (spec->n_groups, spec->groups) < 0
      || setresgid (spec->gid, spec->gid, spec->gid) < 0
      || setresuid (spec->uid, spec->uid, spec->uid) < 0)
    entry_fail (h, errno, 126, "cannot become uid %u gid %u: %s", spec->uid, spec->gid,
                strerror (errno));
  if (chdir (spec->cwd) < 0)
    entry_fail (h, errno, 126, "cannot change to the working directory '%s': %s", spec->cwd,
                strerror (errno));
  umask (022);

  if (strchr (spec->argv[0], '/'))
    {
      entry_exec (h, spec->argv[0], spec);
      exec_errno = errno;
    }
  else
    {
      const char *path = spec_getenv (spec, "PATH");
      char candidate[4096];

      if (!path)
        path = DEFAULT_PATH;
      while (*path)
        {
          const char *end = strchr (path, ':');
          size_t dlen = end ? (size_t) (end - path) : strlen (path);

          if (dlen > 0 && dlen + 1 + strlen (spec->argv[0]) < sizeof candidate)
            {
              snprintf (candidate, sizeof candidate, "%.*s/%s", (int) dlen, path, spec->argv[0]);
              entry_exec (h, candidate, spec);
              /* Like execvp: a file that exists but cannot run is the answer. */
              if (errno != ENOENT && errno != ENOTDIR)
                {
                  exec_errno = errno;
                  break;
                }
            }
          path = end ? end + 1 : path + dlen;
        }
    }
  if (exec_errno == ENOENT)
    snprintf (h->exec_path, sizeof h->exec_path, "%s", spec->argv[0]);
  entry_fail (h, exec_errno, exec_errno == ENOENT ? 127 : 126, "cannot execute '%s': %s",
              spec->argv[0], strerror (exec_errno));
}

/* The stop signal the time limit sends (the spec's), set before
 * on_stop() can run.  The reaper is a process of its own (no CLONE_VM):
 * this copy is its. */
static int stop_signal = SIGTERM;

/* REAPER_STOP_SIGNAL's handler: the stop signal to every process of the
 * namespace but the reaper, then SIGCONT, so a process the workload
 * stopped still gets to handle it (as systemd stops a unit). */
static void
on_stop (int sig)
{
  int saved_errno = errno;

  (void) sig;
  (void) kill (-1, stop_signal);
  (void) kill (-1, SIGCONT);
  errno = saved_errno;
}

/* pid 1 of the workload's namespaces. */
int
reaper_main (void *data)
{
  struct reaper_args *a = data;
  struct handoff *h = a->handoff;
  struct sock_filter insns[128];
  struct sock_fprog prog;
  size_t n_insns;
  uint64_t deadline;
  pid_t entry;
  int listener, r, pty_master = -1, pty_slave = -1, report_r = -1, report_w = -1;

  /* Only the stdio pipes, at 10-12 (above anything PID 1 had open at 0-2,
   * below the rest): the evidence port and everything else of PID 1 stays
   * behind. */
  {
    int *fds[3] = { &a->in_fd, &a->out_fd, &a->err_fd };
    int tmp[3];

    /* Up out of the way first, so no move overwrites another pipe. */
    for (int i = 0; i < 3; i++)
      tmp[i] = *fds[i] >= 0 ? fcntl (*fds[i], F_DUPFD, 100) : -1;
    for (int i = 0; i < 3; i++)
      if (*fds[i] >= 0)
        {
          if (tmp[i] < 0 || dup2 (tmp[i], 10 + i) < 0)
            return reaper_fail (h, "cannot move the stdio pipes: %s", strerror (errno));
          *fds[i] = 10 + i;
        }
    if (syscall (SYS_close_range, 0, 9, 0) < 0 || syscall (SYS_close_range, 13, ~0u, 0) < 0)
      return reaper_fail (h, "cannot close inherited fds: %s", strerror (errno));
  }
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  /* PID 1 blocks SIGCHLD for its signalfd: nothing of that may reach the
   * workload, so every signal starts unblocked and at its default. */
  {
    sigset_t none;
    struct sigaction dfl = { .sa_handler = SIG_DFL };

    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
      if (sig != SIGKILL && sig != SIGSTOP)
        sigaction (sig, &dfl, NULL);
  }
  if (prctl (PR_SET_DUMPABLE, 0) < 0)
    return reaper_fail (h, "cannot make the reaper non-dumpable: %s", strerror (errno));

  if (setup_root (a->spec, h) != 0)
    return 1;
  if (a->spec->user)
    {
      char why[300];

      if (resolve_user (a->spec, why, sizeof why) < 0)
        return reaper_fail (h, "%s", why);
    }
  if (h->shell_fallback)
    a->spec->argv[0] = (char *) STATIC_SHELL;   /* our copy of the spec: PID 1's is untouched */
  if (a->spec->tty)
    {
      /* After the pivot: /dev/ptmx is the workload's own devpts instance,
       * so the terminal is one of its namespace, and nothing of the
       * guest's (the console, other terminals) is reachable through it.
       * The master goes to PID 1 (pidfd_getfd, like the listener) and is
       * closed here before the entrypoint exists; the entrypoint gets the
       * slave only.  Both are moved above the stdio numbers so dup2 onto
       * 0-2 always makes a new descriptor. */
      struct winsize ws = { .ws_row = a->spec->tty_rows, .ws_col = a->spec->tty_cols };
      int unlock = 0, m, sl;

      m = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
      if (m < 0 || ioctl (m, TIOCSPTLCK, &unlock) < 0 || ioctl (m, TIOCSWINSZ, &ws) < 0)
        return reaper_fail (h, "cannot make the workload's terminal: %s", strerror (errno));
      sl = ioctl (m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
      if (sl < 0)
        return reaper_fail (h, "cannot open the workload's terminal: %s", strerror (errno));
      pty_master = fcntl (m, F_DUPFD_CLOEXEC, 10);
      pty_slave = fcntl (sl, F_DUPFD, 10);
      if (pty_master < 0 || pty_slave < 0)
        return reaper_fail (h, "cannot move the workload's terminal: %s", strerror (errno));
      close (m);
      close (sl);
      h->pty_fd = pty_master;
    }

  if (!a->filter)
    {
      /* Benchmark floor: same namespaces and process tree, no filter. */
      __atomic_store_n (&h->state, HANDOFF_PUBLISHED, __ATOMIC_RELEASE);
      listener = -1;
      goto wait_ack;
    }
  r = filter_build (insns, sizeof insns / sizeof insns[0], a->hooked, &n_insns);
  if (r < 0)
    return reaper_fail (h, "cannot assemble the seccomp filter: %s", strerror (-r));
  prog.len = (unsigned short) n_insns;
  prog.filter = insns;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return reaper_fail (h, "cannot set no_new_privs: %s", strerror (errno));
  /* WAIT_KILLABLE_RECV: once the supervisor has a call in hand, only a
   * fatal signal interrupts it, so a call it performs for the workload is
   * never run twice by a signal-restarted system call. */
  listener = (int) syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_NEW_LISTENER
                            | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
  if (listener < 0)
    return reaper_fail (h, "cannot install the seccomp filter: %s", strerror (errno));

  /* From here on the reaper's own calls are filtered too; it makes none
   * the filter selects until the entrypoint's fork.  The supervisor takes
   * the listener with pidfd_getfd(); no message on a socket (sendmsg is
   * itself a notified call nobody would answer yet). */
  h->listener_fd = listener;
  __atomic_store_n (&h->state, HANDOFF_PUBLISHED, __ATOMIC_RELEASE);
wait_ack:
  deadline = clock_ns (CLOCK_MONOTONIC) + HANDOFF_TIMEOUT_MS * NS_PER_MS;
  while (__atomic_load_n (&h->state, __ATOMIC_ACQUIRE) != HANDOFF_ACKED)
    {
      if (clock_ns (CLOCK_MONOTONIC) > deadline)
        return reaper_fail (h, "the supervisor did not take the listener");
      sleep_ms (1);
    }
  if (listener >= 0)
    close (listener);
  if (pty_master >= 0)
    close (pty_master);   /* PID 1 has its own now */

  /* Close-on-exec, above the stdio numbers: end of file on its read end
   * means the entrypoint's execve succeeded (or it died, having written
   * why to the handoff when it gave up on its own). */
  {
    int p[2];

    if (pipe2 (p, O_CLOEXEC) < 0 || (report_r = fcntl (p[0], F_DUPFD_CLOEXEC, 20)) < 0
        || (report_w = fcntl (p[1], F_DUPFD_CLOEXEC, 20)) < 0)
      {
        h->exec_errno = errno;
        snprintf (h->exec_note, sizeof h->exec_note, "cannot make the exec report pipe: %s",
                  strerror (errno));
        __atomic_store_n (&h->exec_failed, 1, __ATOMIC_RELEASE);
        __atomic_store_n (&h->exec_state, EXEC_REPORTED, __ATOMIC_RELEASE);
        entry_error ("airlock: %s", h->exec_note);
        return 1;
      }
    close (p[0]);
    close (p[1]);
  }
  entry = fork ();
  if (entry < 0)
    {
      h->exec_errno = errno;
      snprintf (h->exec_note, sizeof h->exec_note, "cannot fork the entrypoint: %s",
                strerror (errno));
      __atomic_store_n (&h->exec_failed, 1, __ATOMIC_RELEASE);
      __atomic_store_n (&h->exec_state, EXEC_REPORTED, __ATOMIC_RELEASE);
      entry_error ("airlock: %s", h->exec_note);
      return 1;
    }
  if (entry == 0)
    {
      close (report_r);
      if (pty_slave >= 0)
        run_entrypoint (a->spec, h, report_w, pty_slave, pty_slave, pty_slave);
      run_entrypoint (a->spec, h, report_w, a->in_fd, a->out_fd, a->err_fd);
    }
  close (report_w);
  h->exec_pid = entry;
  /* The time limit's stop (REAPER_STOP_SIGNAL), from the supervisor: as a
   * namespace's init the reaper receives only the signals it handles, and
   * only the entrypoint's fork above runs without this handler. */
  {
    struct sigaction stop = { .sa_handler = on_stop, .sa_flags = SA_RESTART };

    stop_signal = a->spec->stop_signal;
    sigemptyset (&stop.sa_mask);
    sigaction (REAPER_STOP_SIGNAL, &stop, NULL);
  }
  {
    char c;
    ssize_t n;

    /* Nothing is ever written: only end of file comes. */
    do
      n = read (report_r, &c, 1);
    while (n < 0 && errno == EINTR);
    close (report_r);
    __atomic_store_n (&h->exec_state, EXEC_REPORTED, __ATOMIC_RELEASE);
  }
  if (pty_slave >= 0)
    close (pty_slave);   /* the terminal hangs up once the workload's last holder is gone */
  else
    {
      if (a->in_fd >= 0)
        close (a->in_fd);
      close (a->out_fd);
      close (a->err_fd);
    }

  /* Reap until nothing is left: orphans of the workload are re-parented
   * here, and the run lasts as long as any of them does. */
  for (;;)
    {
      int status;
      pid_t p = waitpid (-1, &status, __WALL);

      if (p < 0 && errno == EINTR)
        continue;
      if (p < 0)
        break;
      if (p == entry)
        {
          h->entrypoint_status = status;
          __atomic_store_n (&h->entrypoint_exited, 1, __ATOMIC_RELEASE);
        }
    }
  return 0;
}
