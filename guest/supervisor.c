/* The supervisor: runs the workload the host's spec describes and reports
 * every network system call it makes.
 *
 * It is part of the guest's PID 1 (init.c), not a process of its own: if
 * it dies, the kernel panics and the VM stops (panic=-1), so the workload
 * cannot outlive it and the host sees a run without a trailer.
 *
 * Process layout:
 *
 *   PID 1 (init + supervisor; holds the evidence port; initial namespaces)
 *    ├─ heartbeat thread, worker threads for calls it performs
 *    └─ reaper: pid 1 of the workload's pid namespace; new mount, ipc and
 *       uts namespaces; root pivoted onto an overlay of the spec's root;
 *       installs the seccomp filter (so it and every descendant carry it),
 *       hands the listener to PID 1, then forks the entrypoint and reaps
 *       until no process is left in the namespace
 *        └─ entrypoint: credentials and capabilities dropped, the spec's
 *           argv/env/cwd, stdin /dev/null, stdout/stderr a pipe to PID 1
 *           (or pipes to the stdio port, or a terminal of the workload's
 *           devpts whose master PID 1 holds: docs/supervisor.md)
 *
 * The reaper is ours and static: it runs nothing from the image.  Signals
 * from inside its namespace cannot kill it (pid-1 rules), and it is not
 * dumpable, so the workload (without CAP_SYS_PTRACE) cannot reach its
 * memory.  When it exits the kernel kills whatever is left in the
 * namespace.
 *
 * This file: one workload, start to end (run_workload(): the reaper's
 * clone, the listener handoff, the main loop, the run's end and its
 * events), the negative controls before the image, and supervisor_run().
 * The parts it drives have their own files: reaper.c (the reaper and the
 * entrypoint), rootfs.c (the workload's root), heartbeat.c, stdio.c (the
 * workload's output and stdio), network.c (loopback and the NIC) and
 * notify.c (one notification). */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "reaper.h"
#include "run-spec.h"
#include "supervisor.h"
#include "workload.h"

static int
send_simple_event (uint32_t kind, uint32_t phase, pid_t pid, bool has_status, uint32_t status)
{
  struct wire_frame f;

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, kind);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, clock_ns (CLOCK_BOOTTIME));
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, phase);
  if (pid > 0)
    wire_put_u32 (&f, AIRLOCK_TLV_EV_PID, (uint32_t) pid);
  if (has_status)
    wire_put_u32 (&f, AIRLOCK_TLV_EV_EXIT_STATUS, status);
  return channel_send (&f, NULL);
}

/* The WORKLOAD_EXEC event from what the reaper published: RESULT 0 when
 * the entrypoint's execve succeeded, -errno of the step that failed, and
 * no RESULT when the outcome is unknown (the run ended before the reaper
 * saw it: then @note_if_unknown says so). */
static int
send_exec_event (struct handoff *h, uint32_t phase, const char *note_if_unknown)
{
  struct wire_frame f;
  bool reported = __atomic_load_n (&h->exec_state, __ATOMIC_ACQUIRE) == EXEC_REPORTED;
  bool failed = __atomic_load_n (&h->exec_failed, __ATOMIC_ACQUIRE) != 0;

  wire_begin (&f, AIRLOCK_FRAME_EVENT, 0);
  wire_put_u32 (&f, AIRLOCK_TLV_EV_KIND, AIRLOCK_EVENT_WORKLOAD_EXEC);
  wire_put_u64 (&f, AIRLOCK_TLV_EV_TIME_NS, clock_ns (CLOCK_BOOTTIME));
  wire_put_u32 (&f, AIRLOCK_TLV_EV_PHASE, phase);
  if (h->exec_pid > 0)
    wire_put_u32 (&f, AIRLOCK_TLV_EV_NSPID, (uint32_t) h->exec_pid);
  h->exec_path[sizeof h->exec_path - 1] = '\0';
  if (h->exec_path[0])
    wire_put_str (&f, AIRLOCK_TLV_EV_PATH, h->exec_path);
  if (reported)
    wire_put_u64 (&f, AIRLOCK_TLV_EV_RESULT,
                  failed ? (uint64_t) (int64_t) -(h->exec_errno > 0 ? h->exec_errno : EIO) : 0);
  h->exec_note[sizeof h->exec_note - 1] = '\0';
  if (reported && failed && h->exec_note[0])
    wire_put_str (&f, AIRLOCK_TLV_EV_NOTE, h->exec_note);
  else if (!reported)
    wire_put_str (&f, AIRLOCK_TLV_EV_NOTE, note_if_unknown);
  return channel_send (&f, NULL);
}

/* The reaper's end reaches PID 1 only through its signalfd, so SIGCHLD
 * must be blocked in every thread of PID 1: a thread with it open is one
 * the kernel may hand the signal to, and its default action drops it (the
 * relay of the network port was such a thread, and one run in ten or so
 * waited for ever on a zombie reaper).  Checked, not assumed: a thread
 * added before this point with the signal open fails every run here,
 * instead of one in ten at random.
 *
 * The thread of PID 1 that has SIGCHLD open, written to @tid (empty when
 * none).  A thread on its way out (state Z or X) is passed over: the kernel
 * hands no signal to an exiting task, and a detached worker of the last
 * phase can still be one when the next phase begins. */
static int
find_sigchld_open (char *tid, size_t tid_size, char *error, size_t error_size)
{
  DIR *d = opendir ("/proc/self/task");
  struct dirent *e;

  tid[0] = '\0';
  if (!d)
    return fail (error, error_size, "cannot list PID 1's threads in /proc/self/task: %s",
                 strerror (errno));
  while ((e = readdir (d)))
    {
      char path[64 + sizeof e->d_name], line[256];
      unsigned long long blocked = 0;
      bool found = false, exiting = false;
      FILE *f;

      if (e->d_name[0] < '0' || e->d_name[0] > '9')
        continue;
      snprintf (path, sizeof path, "/proc/self/task/%s/status", e->d_name);
      f = fopen (path, "re");
      if (!f)
        continue;   /* the thread ended meanwhile */
      while (!found && fgets (line, sizeof line, f))
        {
          char state = 0;

          if (sscanf (line, "State: %c", &state) == 1)
            exiting = state == 'Z' || state == 'X';
          found = sscanf (line, "SigBlk: %llx", &blocked) == 1;
        }
      fclose (f);
      if (found && !exiting && !(blocked & (1ull << (SIGCHLD - 1))))
        {
          snprintf (tid, tid_size, "%s", e->d_name);
          break;
        }
    }
  closedir (d);
  return 0;
}

static int
check_sigchld_blocked (char *error, size_t error_size)
{
  char tid[256];

  /* A thread that is ending (a detached worker of the last phase, the
   * moment before the kernel marks it exiting) is given up to 200 ms to
   * go; one that stays has the signal open for good. */
  for (int i = 0; i < 20; i++)
    {
      int r = find_sigchld_open (tid, sizeof tid, error, error_size);

      if (r < 0)
        return r;
      if (!tid[0])
        return 0;
      poll (NULL, 0, 10);
    }
  return fail (error, error_size, "thread %s of PID 1 does not block SIGCHLD: the "
               "reaper's end could go to it and be lost", tid);
}

/* A time limit has passed: the workload gets the stop signal, as from
 * `docker stop`, and a grace to end in (AIRLOCK_STOP_GRACE_MS) while the
 * supervisor goes on recording.  What a program does on its way out (a
 * handler that reports to its home on SIGTERM) is part of what it does;
 * killing it outright hid that.  The reaper sends the signal: only the
 * namespace's init reaches every process of it at once (reaper.c). */
static void
stop_workload (pid_t reaper, const struct run_spec *spec, struct heartbeat *hb,
               uint64_t *ret_grace_end, uint64_t *ret_grace_ticks)
{
  *ret_grace_ticks = __atomic_load_n (&hb->ticks, __ATOMIC_ACQUIRE);
  if (spec->stop_signal == SIGKILL)
    {
      console_log ("stop: the time limit passed: the workload's stop signal is SIGKILL");
      *ret_grace_end = 0;   /* nothing to wait for */
      return;
    }
  console_log ("stop: the time limit passed: signal %d to the workload, %u ms to end",
               spec->stop_signal, AIRLOCK_STOP_GRACE_MS);
  *ret_grace_end = clock_ns (CLOCK_MONOTONIC) + (uint64_t) AIRLOCK_STOP_GRACE_MS * NS_PER_MS;
  kill (reaper, REAPER_STOP_SIGNAL);
}

/* Whether the stop's grace is over: AIRLOCK_STOP_GRACE_MS of guest time
 * and, under a warped clock, no more host ticks than that long (a busy
 * workload's guest time runs slower than ours, and the host waits for the
 * trailer only so long after its own limit). */
static bool
grace_over (const struct run_spec *spec, struct heartbeat *hb, uint32_t heartbeat_ms, uint64_t now,
            uint64_t grace_end, uint64_t grace_ticks)
{
  if (now >= grace_end)
    return true;
  return spec->warp && heartbeat_ms
         && __atomic_load_n (&hb->ticks, __ATOMIC_ACQUIRE) - grace_ticks
              >= AIRLOCK_STOP_GRACE_MS / heartbeat_ms;
}

/* One workload, start to end: its reaper and namespaces, the listener
 * handoff, the notification loop, its end.  Heartbeats run only while a
 * workload does (the reaper must be cloned from a process none of whose
 * threads can hold a lock: none of the supervisor's has started yet). */
static int
run_workload (struct run_spec *spec, uint32_t phase, uint32_t heartbeat_ms, bool filter,
              struct run_result *ret, char *error, size_t error_size)
{
  static uint8_t reaper_stack[256 * 1024] __attribute__ ((aligned (16)));
  struct reaper_args args;
  struct handoff *h;
  struct heartbeat hb;
  struct notifier *notifier;
  struct relay relay = { .len = 0 };
  sigset_t sigchld;
  uint64_t deadline, handoff_deadline;
  int pipefd[2] = { -1, -1 }, in_pipe[2] = { -1, -1 }, out_pipe[2] = { -1, -1 };
  int err_pipe[2] = { -1, -1 }, sfd, pidfd, listener, r, status = 0;
  struct stdio_relay stdio = { .port = -1, .in_w = -1, .out_r = -1, .err_r = -1, .pty = -1 };
  bool stdio_started = false;
  pid_t reaper;
  bool timed_out = false, output_open, reaper_gone = false, exec_sent = false;
  bool wall_limit = false, killed = false;
  uint64_t grace_end = 0, grace_ticks = 0;
  uint64_t refused_before = hooks_refused (), hooked_before = hooks_count ();
  uint64_t lost_before = hooks_lost ();

  h = mmap (NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (h == MAP_FAILED)
    return fail (error, error_size, "cannot map the handoff page: %s", strerror (errno));
  memset (h, 0, sizeof *h);
  if (spec->stdio)
    {
      char dev[300];

      stdio.port = open_port (AIRLOCK_PORT_STDIO, dev, sizeof dev);
      if (stdio.port < 0)
        return fail (error, error_size, "cannot open the stdio port '%s': %s", AIRLOCK_PORT_STDIO,
                     strerror (-stdio.port));
      /* With a terminal there are no pipes: the reaper makes it in the
       * workload's devpts and hands us its master. */
      args.in_fd = args.out_fd = args.err_fd = -1;
    }
  if (spec->stdio && !spec->tty)
    {
      if (pipe2 (in_pipe, O_CLOEXEC) < 0 || pipe2 (out_pipe, O_CLOEXEC) < 0
          || pipe2 (err_pipe, O_CLOEXEC) < 0)
        return fail (error, error_size, "cannot create the stdio pipes: %s", strerror (errno));
      args.in_fd = in_pipe[0];
      args.out_fd = out_pipe[1];
      args.err_fd = err_pipe[1];
    }
  else if (!spec->stdio)
    {
      if (pipe2 (pipefd, O_CLOEXEC) < 0)
        return fail (error, error_size, "cannot create the output pipe: %s", strerror (errno));
      args.in_fd = -1;
      args.out_fd = pipefd[1];
      args.err_fd = pipefd[1];
    }
  output_open = !spec->stdio;

  sigemptyset (&sigchld);
  sigaddset (&sigchld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &sigchld, NULL);
  r = check_sigchld_blocked (error, error_size);
  if (r < 0)
    return r;
  sfd = signalfd (-1, &sigchld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    return fail (error, error_size, "cannot create a signalfd: %s", strerror (errno));

  /* No thread of the supervisor's exists yet: the reaper starts from a
   * copy of PID 1 whose only other threads, when there are any, are the
   * network port's relay (net-port.c), which reads and writes its two fds
   * and takes no lock, so none can be held in the copy. */
  args.spec = spec;
  args.filter = filter;
  args.hooked = hooks_active ();
  args.handoff = h;
  reaper = clone (reaper_main, reaper_stack + sizeof reaper_stack,
                  CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, &args);
  if (reaper < 0)
    return fail (error, error_size, "cannot start the workload's namespaces: %s", strerror (errno));
  if (spec->stdio && !spec->tty)
    {
      close (in_pipe[0]);
      close (out_pipe[1]);
      close (err_pipe[1]);
      stdio.in_w = in_pipe[1];
      stdio.out_r = out_pipe[0];
      stdio.err_r = err_pipe[0];
      fcntl (stdio.in_w, F_SETFL, O_NONBLOCK);
    }
  else if (!spec->stdio)
    {
      close (pipefd[1]);
      fcntl (pipefd[0], F_SETFL, O_NONBLOCK);
    }

  /* Take the listener from the reaper. */
  handoff_deadline = clock_ns (CLOCK_MONOTONIC) + HANDOFF_TIMEOUT_MS * NS_PER_MS;
  for (;;)
    {
      int state = __atomic_load_n (&h->state, __ATOMIC_ACQUIRE);

      if (state == HANDOFF_PUBLISHED)
        break;
      if (state == HANDOFF_FAILED || waitpid (reaper, &status, WNOHANG) == reaper
          || clock_ns (CLOCK_MONOTONIC) > handoff_deadline)
        {
          kill (reaper, SIGKILL);
          waitpid (reaper, NULL, 0);
          return fail (error, error_size, "the workload's setup failed: %s",
                       h->error[0] ? h->error : "the reaper exited or hung before its filter was in place");
        }
      sleep_ms (1);
    }
  listener = -1;
  if (filter)
    {
      pidfd = (int) syscall (SYS_pidfd_open, reaper, 0);
      listener = pidfd < 0 ? -1 : (int) syscall (SYS_pidfd_getfd, pidfd, h->listener_fd, 0);
      if (listener < 0)
        {
          int e = errno;
          kill (reaper, SIGKILL);
          waitpid (reaper, NULL, 0);
          return fail (error, error_size, "cannot take the seccomp listener from the reaper: %s",
                       strerror (e));
        }
      close (pidfd);
      fcntl (listener, F_SETFD, FD_CLOEXEC);
    }
  if (spec->tty)
    {
      /* The terminal's master, taken like the listener: no socket, and
       * the workload never has it. */
      pidfd = (int) syscall (SYS_pidfd_open, reaper, 0);
      stdio.pty = pidfd < 0 ? -1 : (int) syscall (SYS_pidfd_getfd, pidfd, h->pty_fd, 0);
      if (stdio.pty < 0)
        {
          int e = errno;
          kill (reaper, SIGKILL);
          waitpid (reaper, NULL, 0);
          return fail (error, error_size, "cannot take the workload's terminal from the reaper: %s",
                       strerror (e));
        }
      close (pidfd);
      fcntl (stdio.pty, F_SETFD, FD_CLOEXEC);
      fcntl (stdio.pty, F_SETFL, O_NONBLOCK);
    }
  __atomic_store_n (&h->state, HANDOFF_ACKED, __ATOMIC_RELEASE);
  if (h->shell_fallback)
    channel_logf ("shell: the image has no executable '%s': running airlock's static shell %s "
                  "(bound read-only from %s)", spec->argv[0], STATIC_SHELL, spec->shell_dir);
  else if (spec->shell_dir)
    channel_logf ("shell: running the image's own '%s'", spec->argv[0]);

  r = send_simple_event (AIRLOCK_EVENT_WORKLOAD_START, phase, reaper, false, 0);
  if (r < 0)
    return fail (error, error_size, "cannot send the workload-start event: %s", strerror (-r));
  if (heartbeat_start (&hb, heartbeat_ms, spec->warp) < 0)
    return fail (error, error_size, "cannot start the heartbeat thread");
  if (spec->warp && clock_hold_start () < 0)
    return fail (error, error_size, "cannot start the clock hold's thread");
  if (spec->stdio)
    {
      if (pthread_create (&stdio.thread, NULL, spec->tty ? tty_main : stdio_main, &stdio) != 0)
        return fail (error, error_size, "cannot start the stdio thread");
      stdio_started = true;
    }

  notifier = notifier_new (listener);
  if (!notifier)
    return fail (error, error_size, "out of memory");

  /* The loop: notifications, output, the reaper's end, the deadline (of
   * guest time: under a warped clock the host's STOP is the wall's). */
  deadline = clock_ns (CLOCK_MONOTONIC) + spec->timeout_ms * NS_PER_MS;
  while (!reaper_gone)
    {
      struct pollfd fds[5] = {
        { .fd = listener, .events = POLLIN },
        { .fd = sfd, .events = POLLIN },
        { .fd = output_open ? pipefd[0] : -1, .events = POLLIN },
        { .fd = hb.main_fd, .events = POLLIN },
        { .fd = hooks_fd (), .events = POLLIN },
      };
      uint64_t now = clock_ns (CLOCK_MONOTONIC);
      int timeout;

      if (now >= deadline && !timed_out)
        {
          timed_out = true;
          stop_workload (reaper, spec, &hb, &grace_end, &grace_ticks);
        }
      if (timed_out && !killed && grace_over (spec, &hb, heartbeat_ms, now, grace_end, grace_ticks))
        {
          /* The reaper's death takes the whole namespace with it. */
          console_log ("stop: the workload is still running after its grace: killed");
          killed = true;
          kill (reaper, SIGKILL);
        }
      if (!timed_out)
        timeout = (int) ((deadline - now) / NS_PER_MS) + 1;
      else if (!killed && grace_end - now < 100 * NS_PER_MS)
        timeout = (int) ((grace_end - now) / NS_PER_MS) + 1;
      else
        timeout = 100;
      if (!exec_sent)
        {
          /* The reaper publishes the execve's outcome through memory, not
           * an fd: look again soon until it has (a few ms after the start). */
          if (__atomic_load_n (&h->exec_state, __ATOMIC_ACQUIRE) == EXEC_REPORTED)
            {
              r = send_exec_event (h, phase, NULL);
              if (r < 0)
                return fail (error, error_size, "cannot send the workload-exec event: %s",
                             strerror (-r));
              exec_sent = true;
            }
          else if (timeout > 2)
            timeout = 2;
        }
      r = poll (fds, 5, timeout);
      if (r < 0 && errno != EINTR)
        return fail (error, error_size, "poll failed: %s", strerror (errno));
      if (r <= 0)
        continue;
      if (fds[3].revents & POLLIN)
        {
          uint64_t count;

          (void) read (hb.main_fd, &count, sizeof count);
          if (__atomic_load_n (&hb.host_stop, __ATOMIC_ACQUIRE) && !timed_out)
            {
              /* The host's wall-time limit: the same end as our own. */
              timed_out = wall_limit = true;
              stop_workload (reaper, spec, &hb, &grace_end, &grace_ticks);
            }
        }
      if (fds[0].revents & POLLIN)
        {
          /* The hooked records first: a call the kernel recorded before
           * this notification (a connect just before an execve) is read
           * while its process still waits here, as the binary that made
           * it (hooks.c, hooked_proc). */
          if (hooks_fd () >= 0)
            {
              r = hooks_drain ();
              if (r < 0)
                return fail (error, error_size, "cannot send a hooked record: %s", strerror (-r));
            }
          r = notifier_handle_one (notifier);
          if (r < 0)
            return fail (error, error_size, "the seccomp listener failed: %s", strerror (-r));
        }
      if (fds[4].revents & POLLIN)
        {
          r = hooks_drain ();
          if (r < 0)
            return fail (error, error_size, "cannot send a hooked record: %s", strerror (-r));
        }
      if (fds[2].revents & (POLLIN | POLLHUP))
        output_open = relay_output (pipefd[0], &relay);
      if (fds[1].revents & POLLIN)
        {
          struct signalfd_siginfo si;

          while (read (sfd, &si, sizeof si) == sizeof si)
            ;
          if (waitpid (reaper, &status, WNOHANG) == reaper)
            reaper_gone = true;
        }
      r = __atomic_load_n (&hb.error, __ATOMIC_ACQUIRE);
      if (r < 0)
        return fail (error, error_size, "cannot send a heartbeat: %s", strerror (-r));
    }

  /* Everything in the namespace is gone: nothing waits for an answer. */
  clock_hold_stop ();
  /* Late output, then the calls the supervisor was still performing. */
  while (output_open && relay_output (pipefd[0], &relay))
    ;
  if (stdio_started)
    {
      /* Every writer of the pipes is gone: the thread sees end of file on
       * both and ends once the last chunk is out. */
      pthread_join (stdio.thread, NULL);
      console_log ("workload stdio: %llu byte(s) in, %llu out",
                   (unsigned long long) stdio.bytes_in, (unsigned long long) stdio.bytes_out);
    }
  notifier_finish (notifier);
  if (listener >= 0)
    close (listener);
  /* Every process that could send is gone: what the hooks recorded is all
   * in the ring, and goes out before this phase's end. */
  r = hooks_drain ();
  if (r < 0)
    return fail (error, error_size, "cannot send a hooked record: %s", strerror (-r));
  if (hooks_lost () > lost_before)
    channel_logf ("the kernel-hook recorder lost %llu record(s) of sends, connects or their "
                  "outcomes: its record ring was full (the calls went ahead; the trailer "
                  "counts them)",
                  (unsigned long long) (hooks_lost () - lost_before));
  if (hooks_refused () > refused_before)
    channel_logf ("the kernel-hook recorder refused %llu call(s): its record ring was full "
                  "(each send or connect failed with EPERM; nothing was sent)",
                  (unsigned long long) (hooks_refused () - refused_before));

  if (!exec_sent)
    {
      r = send_exec_event (h, phase, timed_out ? "the time limit ended the run before the entrypoint's "
                                                 "execve was seen"
                                               : "the workload ended before the entrypoint's execve "
                                                 "was seen");
      if (r < 0)
        return fail (error, error_size, "cannot send the workload-exec event: %s", strerror (-r));
    }
  r = send_simple_event (AIRLOCK_EVENT_WORKLOAD_EXIT, phase, 0, true,
                         __atomic_load_n (&h->entrypoint_exited, __ATOMIC_ACQUIRE)
                         ? (uint32_t) h->entrypoint_status : (uint32_t) status);
  heartbeat_stop (&hb);
  if (r < 0)
    return fail (error, error_size, "cannot send the workload-exit event: %s", strerror (-r));
  console_log ("workload ended (%s) after %llu traced call(s) and %llu hooked record(s)",
               wall_limit ? "the host's wall-time limit" : timed_out ? "timeout" : "completed",
               (unsigned long long) notifier_count (notifier),
               (unsigned long long) (hooks_count () - hooked_before));

  ret->exit_status = __atomic_load_n (&h->entrypoint_exited, __ATOMIC_ACQUIRE)
                     ? (uint32_t) h->entrypoint_status : (uint32_t) status;
  ret->end_reason = wall_limit ? AIRLOCK_END_WALL_LIMIT
                    : timed_out ? AIRLOCK_END_TIMEOUT : AIRLOCK_END_COMPLETED;
  /* PID 1 runs more than one workload (the controls, then the image):
   * nothing of this one stays behind. */
  notifier_free (notifier);
  munmap (h, sizeof *h);
  close (sfd);
  if (pipefd[0] >= 0)
    close (pipefd[0]);
  if (stdio.port >= 0)
    close (stdio.port);
  if (stdio.pty >= 0)
    close (stdio.pty);
  return 0;
}

/* The negative controls: guest/probe (ours, static, in the initramfs at
 * CONTROLS_ROOT/bin/probe) makes the attempts guest/probe-controls.h
 * lists, under the same supervisor, kernel and network as the image that
 * follows, so the host can prove the detector was not blind. */
#define CONTROLS_ROOT "/airlock/controls"
#define CONTROLS_TIMEOUT_MS 60000

static int
run_controls (uint32_t heartbeat_ms, bool warp, bool filter, const char *skip, char *error,
              size_t error_size)
{
  static struct run_spec controls;
  static char arg0[] = "/bin/probe", env0[] = "PATH=/bin", cwd[] = "/", root[] = CONTROLS_ROOT,
              host[] = "airlock", skip_opt[] = "--skip", skip_arg[64];
  struct run_result result;

  memset (&controls, 0, sizeof controls);
  controls.argv[0] = arg0;
  controls.argc = 1;
  if (skip)
    {
      snprintf (skip_arg, sizeof skip_arg, "%s", skip);
      controls.argv[controls.argc++] = skip_opt;
      controls.argv[controls.argc++] = skip_arg;
    }
  controls.envp[0] = env0;
  controls.envc = 1;
  controls.cwd = cwd;
  controls.root = root;
  controls.hostname = host;
  controls.timeout_ms = CONTROLS_TIMEOUT_MS;
  controls.stop_signal = SIGTERM;
  controls.warp = warp;
  return run_workload (&controls, AIRLOCK_PHASE_CONTROLS, heartbeat_ms, filter, &result, error,
                       error_size);
}

int
supervisor_run (const uint8_t *spec_bytes, size_t spec_len, uint32_t heartbeat_ms, bool filter,
                const char *skip_control, struct run_result *ret, char *error, size_t error_size)
{
  static struct run_spec spec;
  int r;

  r = parse_spec (spec_bytes, spec_len, &spec, error, error_size);
  if (r < 0)
    return r;
  if (spec.have_clock)
    {
      /* Before the network, the controls and the workload: everything the
       * run does sees the recorded wall clock (a replay's determinism).
       * The evidence's own times are CLOCK_BOOTTIME and do not move. */
      struct timespec ts = { .tv_sec = (time_t) (spec.clock_ns / 1000000000u),
                             .tv_nsec = (long) (spec.clock_ns % 1000000000u) };

      if (clock_settime (CLOCK_REALTIME, &ts) < 0)
        return fail (error, error_size, "cannot set the guest clock: %s", strerror (errno));
    }
  r = loopback_up ();
  if (r < 0)
    return fail (error, error_size, "cannot bring the loopback interface up: %s", strerror (-r));
  /* Before the NIC's configuration, which then finds the tap. */
  if (spec.net_port && (r = net_port_start (error, error_size)) < 0)
    return r;
  r = configure_network (error, error_size);
  if (r < 0)
    return r;
  if (spec.root_disk && (r = mount_root_disk (&spec, error, error_size)) < 0)
    return r;
  if (spec.controls
      && (r = run_controls (heartbeat_ms, spec.warp, filter, skip_control, error, error_size)) < 0)
    return r;
  return run_workload (&spec, AIRLOCK_PHASE_WORKLOAD, heartbeat_ms, filter, ret, error, error_size);
}
