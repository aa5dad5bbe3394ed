/* Hostile techniques 6-13 and 23-24: ways around the supervisor, and out of
 * the process tree it watches.  The filter is the kernel's, inherited by every
 * task at fork/clone and kept across execve, so no new process starts
 * outside it; the supervisor runs outside the workload's pid namespace, so
 * the workload cannot signal, trace or even name it; the run ends when the
 * last workload process is gone, not when the entrypoint exits. */
#define _GNU_SOURCE

#include "testprog.h"
#include "techniques.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void
sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

static void
connect_port (unsigned n, unsigned port)
{
  struct sockaddr_in sa;
  char ip[16];
  int fd = socket (AF_INET, SOCK_STREAM, 0);

  make_sin (&sa, hostile_net2 (ip, n), port);
  if (fd < 0)
    {
      report ("socket", -1);
      return;
    }
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0 && errno != ECONNREFUSED)
    say ("connect %s:%u: errno %d", ip, port, errno);
  close (fd);
}

/* 6.  clone3 (flags in memory no filter can read) for a child that
 * connects; it is refused with ENOSYS (recorded once), and a libc falls
 * back to clone, whose child is as watched as any: its connect to
 * 198.51.100.6:7006 is recorded. */
int
technique_clone3_child (int argc, char **argv)
{
  struct clone_args args;
  long pid;
  int status;

  memset (&args, 0, sizeof args);
  args.exit_signal = SIGCHLD;
  fflush (stdout);
  pid = syscall (SYS_clone3, &args, sizeof args);
  if (pid == 0)
    {
      hostile_canary (6);
      _exit (0);
    }
  report ("clone3", pid);
  if (pid > 0)
    {
      waitpid ((pid_t) pid, &status, 0);
      say ("clone3 made a child: not refused");
      return TESTPROG_FAILED;
    }
  pid = fork ();
  if (pid == 0)
    {
      hostile_canary (6);
      _exit (0);
    }
  waitpid ((pid_t) pid, &status, 0);
  return TESTPROG_OK;
}

/* 7.  process_vm_writev into a sibling that is about to connect: rewriting
 * another process's sockaddr between the supervisor's read and the kernel's
 * would be a TOCTOU from outside.  Refused; the child connects to the
 * address it holds (198.51.100.7:7007), not 203.0.113.7. */
int
technique_vm_writev (int argc, char **argv)
{
  static struct sockaddr_in sa;
  struct sockaddr_in forged;
  struct iovec local, remote;
  int go[2];
  char ip[16], c = 0;
  pid_t child;
  long r;
  int status;

  make_sin (&sa, hostile_net2 (ip, 7), 7007);
  make_sin (&forged, hostile_net3 (ip, 7), 7007);
  if (pipe (go) < 0)
    return TESTPROG_FAILED;
  fflush (stdout);
  child = fork ();
  if (child == 0)
    {
      int fd;

      close (go[1]);
      (void) read (go[0], &c, 1);
      fd = socket (AF_INET, SOCK_STREAM, 0);
      (void) connect (fd, (struct sockaddr *) &sa, sizeof sa);
      _exit (0);
    }
  close (go[0]);
  local.iov_base = &forged;
  local.iov_len = sizeof forged;
  remote.iov_base = &sa;   /* the same address in the child: a fork */
  remote.iov_len = sizeof sa;
  r = report ("process_vm_writev into the child", syscall (SYS_process_vm_writev, child, &local, 1,
                                                           &remote, 1, 0));
  (void) write (go[1], &c, 1);
  close (go[1]);
  waitpid (child, &status, 0);
  return r < 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 8.  64 children forked at once, each connecting to its own port
 * (198.51.100.8:7100-7163): not one may be missed. */
#define STORM 64

int
technique_fork_storm (int argc, char **argv)
{
  int go[2];
  char c = 0;
  int started = 0, ok = 0;

  if (pipe (go) < 0)
    return TESTPROG_FAILED;
  fflush (stdout);
  for (int i = 0; i < STORM; i++)
    {
      pid_t pid = fork ();

      if (pid == 0)
        {
          close (go[1]);
          /* All start connecting together, when the parent closes the pipe. */
          (void) read (go[0], &c, 1);
          connect_port (8, 7100 + i);
          _exit (0);
        }
      if (pid > 0)
        started++;
    }
  close (go[0]);
  close (go[1]);
  for (;;)
    {
      int status;

      if (wait (&status) < 0)
        break;
      if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
        ok++;
    }
  say ("%d children started, %d ended well", started, ok);
  return started == STORM && ok == STORM ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 9.  A child connects 20 times (198.51.100.9:7200-7219) while its parent
 * stops and continues it as fast as it can: notifications interrupted by
 * group stops must neither lose a record nor wedge the supervisor. */
#define STOPS_CONNECTS 20

int
technique_stop_storm (int argc, char **argv)
{
  pid_t child;
  int status;
  long signals = 0;

  fflush (stdout);
  child = fork ();
  if (child == 0)
    {
      for (int i = 0; i < STOPS_CONNECTS; i++)
        connect_port (9, 7200 + i);
      _exit (0);
    }
  if (child < 0)
    return TESTPROG_FAILED;
  while (waitpid (child, &status, WNOHANG) == 0)
    {
      kill (child, SIGSTOP);
      kill (child, SIGCONT);
      signals += 2;
    }
  say ("%ld signals sent; the child ended with wait status 0x%x", signals, status);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 10.  Looking for the supervisor to kill or stop it: every process this
 * pid namespace shows gets SIGSTOP (kill(-1) reaches all it may signal),
 * PID 1 of the namespace gets SIGSTOP and SIGKILL, and the canary
 * (198.51.100.10:7010) is connected while everything else is stopped.  The
 * supervisor is in none of these: its heartbeats go on and the canary is
 * recorded. */
int
technique_kill_supervisor (int argc, char **argv)
{
  DIR *proc = opendir ("/proc");
  struct dirent *d;
  pid_t child;
  int status, visible = 0;

  while (proc && (d = readdir (proc)))
    if (atoi (d->d_name) > 0)
      {
        visible++;
        say ("visible pid %s", d->d_name);
      }
  if (proc)
    closedir (proc);
  say ("%d processes visible", visible);
  fflush (stdout);
  child = fork ();
  if (child == 0)
    {
      /* PID 1 here is airlock's reaper, trusted: the kernel drops
       * SIGKILL and SIGSTOP sent to a namespace's init from inside it. */
      report ("kill(1, SIGSTOP)", kill (1, SIGSTOP));
      report ("kill(1, SIGKILL)", kill (1, SIGKILL));
      report ("kill(-1, SIGSTOP)", kill (-1, SIGSTOP));
      sleep_ms (500);
      hostile_canary (10);
      report ("kill(-1, SIGCONT)", kill (-1, SIGCONT));
      _exit (0);
    }
  if (child < 0)
    return TESTPROG_FAILED;
  waitpid (child, &status, 0);
  return TESTPROG_OK;
}

/* 11.  Executing a setuid-root copy of this program
 * (/usr/local/bin/testprog-suid, mode 4755) after dropping to uid 1000: the
 * workload runs with no_new_privs, so it stays uid 1000, and its connect
 * (198.51.100.11:7011; 7111 had it become root) is recorded like any. */
#define SUID_COPY "/usr/local/bin/testprog-suid"

int
technique_setuid_exec (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "as-suid") == 0)
    {
      say ("after exec: uid %d euid %d", (int) getuid (), (int) geteuid ());
      connect_port (11, geteuid () == 0 ? 7111 : 7011);
      return geteuid () == 0 ? TESTPROG_FAILED : TESTPROG_OK;
    }
  say ("no_new_privs %d", prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  if (report ("setresgid(1000)", setresgid (1000, 1000, 1000)) < 0
      || report ("setresuid(1000)", setresuid (1000, 1000, 1000)) < 0)
    return TESTPROG_FAILED;
  fflush (stdout);
  execl (SUID_COPY, "testprog-suid", "setuid-exec", "as-suid", (char *) NULL);
  report ("execl " SUID_COPY, -1);
  return TESTPROG_FAILED;
}

/* 12.  A double-forked daemon (setsid, its parent gone) that connects
 * (198.51.100.12:7012) a second after the entrypoint has exited. */
static pid_t
daemonize (void)
{
  pid_t pid;

  fflush (stdout);
  pid = fork ();
  if (pid != 0)
    {
      int status;

      if (pid > 0)
        waitpid (pid, &status, 0);
      return pid;   /* the entrypoint's side */
    }
  setsid ();
  if (fork () != 0)
    _exit (0);
  return 0;        /* the daemon */
}

int
technique_daemon_outlives (int argc, char **argv)
{
  pid_t pid = daemonize ();

  if (pid < 0)
    return TESTPROG_FAILED;
  if (pid > 0)
    {
      say ("the entrypoint exits; its daemon connects in a second");
      return TESTPROG_OK;
    }
  sleep_ms (1000);
  hostile_canary (12);
  _exit (0);
}

/* 13.  The daemon waits until the entrypoint is gone, then starts a new
 * process, which connects (198.51.100.13:7013). */
int
technique_late_child (int argc, char **argv)
{
  pid_t entry = getpid ();
  pid_t pid = daemonize ();
  int status;

  if (pid < 0)
    return TESTPROG_FAILED;
  if (pid > 0)
    return TESTPROG_OK;
  /* kill(entry, 0) fails once the entrypoint is reaped. */
  for (int i = 0; i < 300 && kill (entry, 0) == 0; i++)
    sleep_ms (10);
  sleep_ms (200);
  fflush (stdout);
  pid = fork ();
  if (pid == 0)
    {
      say ("started after the entrypoint exited");
      hostile_canary (13);
      _exit (0);
    }
  if (pid > 0)
    waitpid (pid, &status, 0);
  _exit (0);
}

/* 23.  The kernel's settings through /proc: kernel.core_pattern set to
 * "|/proc/%P/root/PROGRAM" would have the kernel run the workload's own
 * program at its next core dump, with every capability, in the initial
 * namespaces, outside the filter; kernel.modprobe likewise at a module
 * request; /proc/sysrq-trigger crashes or powers off the guest; and
 * vm.* settings change the guest's memory management.  Root in
 * the workload needs no capability to write a sysctl, so /proc/sys and
 * /proc/sysrq-trigger are read-only mounts.  Each is only opened for
 * writing (nothing is written: an open that works is the hole), and each
 * must exist (else the test proves nothing).  /proc/kcore and /proc/keys
 * are masked (empty).  Canary 198.51.100.23:7023. */
int
technique_proc_writes (int argc, char **argv)
{
  static const char *const settings[] = {
    "/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
    "/proc/sys/vm/compaction_proactiveness", "/proc/sys/net/ipv4/ip_forward",
    "/proc/sysrq-trigger",
  };
  int holes = 0;

  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
    {
      int fd;

      if (access (settings[i], F_OK) < 0)
        {
          say ("%s: missing (errno %d): nothing to try", settings[i], errno);
          holes++;
          continue;
        }
      fd = open (settings[i], O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        say ("open %s for writing: errno %d (%s)", settings[i], errno, strerrorname_np (errno));
      else
        {
          say ("opened %s for writing", settings[i]);
          close (fd);
          holes++;
        }
    }
  for (const char *const *p = (const char *const[]) { "/proc/kcore", "/proc/keys", NULL }; *p; p++)
    {
      char byte;
      int fd = open (*p, O_RDONLY | O_CLOEXEC);
      ssize_t n = fd < 0 ? -1 : read (fd, &byte, 1);

      if (n > 0)
        {
          say ("%s is readable, not masked", *p);
          holes++;
        }
      if (fd >= 0)
        close (fd);
    }
  hostile_canary (23);
  return holes == 0 ? TESTPROG_OK : TESTPROG_FAILED;
}

/* 24.  Reporting home on the way out: nothing while the run lasts, and on
 * the stop signal a connect to the canary (198.51.100.24:7024), as a
 * program that flushes its telemetry when it is stopped.  The signal is
 * SIGTERM, or the one its argument names by number (`stop-signal 10`: an
 * image whose StopSignal is SIGUSR1, tests/vm/clock.sh).  It waits for
 * ever: only a time limit ends it, and that must send the stop signal and
 * record what the handler does in the grace before the kill.
 * `stop-signal ignore` ignores SIGTERM and waits for ever, reporting
 * nothing: the grace must end in the kill (tests/vm/clock.sh). */
static volatile sig_atomic_t stop_seen;

static void
on_stop_signal (int sig)
{
  (void) sig;
  stop_seen = 1;
}

int
technique_stop_signal (int argc, char **argv)
{
  struct sigaction sa = { .sa_handler = on_stop_signal };
  int sig = argc > 1 ? atoi (argv[1]) : SIGTERM;

  if (argc > 1 && strcmp (argv[1], "ignore") == 0)
    {
      signal (SIGTERM, SIG_IGN);
      say ("ignoring SIGTERM");
      fflush (stdout);
      for (;;)
        pause ();
    }
  if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP)
    {
      say ("no signal to wait for: '%s'", argv[1]);
      return TESTPROG_FAILED;
    }
  sigemptyset (&sa.sa_mask);
  if (sigaction (sig, &sa, NULL) < 0)
    {
      report ("sigaction", -1);
      return TESTPROG_FAILED;
    }
  say ("waiting for signal %d", sig);
  fflush (stdout);
  while (!stop_seen)
    pause ();
  say ("signal %d: reporting home", sig);
  hostile_canary (24);
  return TESTPROG_OK;
}
