/* Runs every guest test program (tests/guest) under the supervisor, one VM
 * boot per behaviour per arch, and checks what a user relies on: the exact
 * records each behaviour must produce (tests/guest/expected-records.h: a
 * multiset of key lines, nothing missing, nothing extra), that the program
 * ran as intended (it prints "exit 0"), who made each connect in a process
 * tree, and that nothing of the guest leaks into the workload's
 * environment.
 *
 * Paths: /supervisor/<arch>/<command>.  Needs QEMU for both arches, the
 * guest images and the test programs (built with airlock; the testroot
 * initramfs is made into $AIRLOCK_CACHE_DIR on first use); skips with the
 * reason when a piece is missing.  Boots run one after another (TCG guests
 * are CPU-bound) with no waits of their own: each ends when the workload's
 * process tree is gone. */
#include "config.h"

#include <airlock.h>

#include "evidence/event.h"
#include "expected-records.h"
#include "vm-test-util.h"
#include "protocol.h"

#include <stdlib.h>
#include <string.h>

#define TESTROOT "/airlock/testroot"
#define RUN_TIMEOUT_MS 30000
#define HOSTNAME "airlock-test"

static VmTestImages guest_images;

static AirlockGuestImage *
image_for (AirlockArch arch)
{
  AirlockGuestImageOptions o = { .with_testroot = TRUE };

  return vm_test_guest_image (&guest_images, arch, &o, "guest image with the testroot");
}

typedef struct {
  AirlockArch arch;
  const TestprogExpectation *expect;
} Case;

/* The environment the workload gets: all of it, and nothing else may
 * appear in its `env` output. */
static const char *const workload_envp[] = {
  "PATH=/bin", "HOME=/root", "AIRLOCK_TESTPROG=1", NULL,
};

/* Runs /bin/COMMAND (with @arg, if not NULL) under airlock.test=@test_mode,
 * on @vcpus virtual CPUs (0: the default, one). */
static AirlockVm *
run_command_arg_mode (AirlockArch arch, const char *command, const char *arg,
                      gboolean clock_warp, guint vcpus, const char *test_mode)
{
  AirlockGuestImage *image = image_for (arch);
  g_autofree char *program = g_strdup_printf ("/bin/%s", command);
  const char *argv[] = { program, arg, NULL };
  AirlockRunSpec spec = {
    .argv = argv,
    .envp = workload_envp,
    .cwd = "/",
    .root = TESTROOT,
    /* Warped: a limit of guest time past the behaviour's sleep; the wall's
     * stays RUN_TIMEOUT_MS. */
    .timeout_ms = clock_warp ? 6 * 3600 * 1000 : RUN_TIMEOUT_MS,
    .hostname = HOSTNAME,
  };
  AirlockVmOptions o = {
    .accel = AIRLOCK_ACCEL_TCG,
    .heartbeat_ms = 200,
    .boot_timeout_ms = 60000,
    .spec = &spec,
    .clock_warp = clock_warp,
    .wall_timeout_ms = RUN_TIMEOUT_MS,
    .test_mode = test_mode,
    .vcpus = vcpus,
  };

  if (!image)
    return NULL;
  return vm_test_run (arch, image, &o);
}

static AirlockVm *
run_command_mode (AirlockArch arch, const char *command, gboolean clock_warp, guint vcpus,
                  const char *test_mode)
{
  return run_command_arg_mode (arch, command, NULL, clock_warp, vcpus, test_mode);
}

static AirlockVm *
run_command (AirlockArch arch, const TestprogExpectation *e)
{
  return run_command_mode (arch, e->command, e->clock_warp, e->vcpus, NULL);
}

static char *
console_text (AirlockVm *vm)
{
  g_autoptr (GBytes) console = airlock_vm_get_console (vm);

  return g_strndup (g_bytes_get_data (console, NULL), g_bytes_get_size (console));
}

/* The program's own lines ("testprog: COMMAND: …", relayed by the guest
 * init to the console), without their prefixes. */
static GPtrArray *
program_lines (const char *console, const char *command)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *prefix = g_strdup_printf ("testprog: %s: ", command);
  g_auto (GStrv) all = g_strsplit (console, "\n", -1);

  for (guint i = 0; all[i]; i++)
    {
      const char *p = strstr (all[i], prefix);

      if (p)
        g_ptr_array_add (lines, g_strchomp (g_strdup (p + strlen (prefix))));
    }
  return lines;
}

static gboolean
has_line (GPtrArray *lines, const char *line)
{
  for (guint i = 0; i < lines->len; i++)
    if (g_str_equal (lines->pdata[i], line))
      return TRUE;
  return FALSE;
}

/* The time bomb's "woke after N s of guest time": N is whole seconds of
 * CLOCK_MONOTONIC read before and after the sleep, so an hour's sleep that
 * starts late in a second reads 3601 (seen on arm64 under TCG). */
static gboolean
woke_after_hour (GPtrArray *lines)
{
  for (guint i = 0; i < lines->len; i++)
    {
      const char *line = lines->pdata[i];
      char *end;
      gint64 s;

      if (!g_str_has_prefix (line, "woke after "))
        continue;
      s = g_ascii_strtoll (line + strlen ("woke after "), &end, 10);
      if (g_str_equal (end, " s of guest time") && s >= 3600 && s <= 3602)
        return TRUE;
    }
  return FALSE;
}

/* Fails, listing what is missing and what is extra, unless the key lines
 * of @events are exactly the multiset @expected. */
static gboolean
assert_records (const Case *c, GPtrArray *events, const char *console)
{
  g_autoptr (GPtrArray) got = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) want = g_ptr_array_new ();
  g_autoptr (GString) diff = g_string_new (NULL);

  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      char *line = airlock_event_key_line (ev);

      /* Checked apart, against what the program printed. */
      if (line && c->expect->apart && g_str_has_prefix (line, c->expect->apart))
        g_free (g_steal_pointer (&line));
      if (line)
        g_ptr_array_add (got, line);
    }
  for (const char *const *r = c->expect->records; *r; r++)
    {
      /* "ARCH:line" is expected on that arch only (libc differences). */
      const char *colon = strchr (*r, ':');
      const char *space = strchr (*r, ' ');

      if (colon && space && colon < space
          && (g_str_has_prefix (*r, "amd64:") || g_str_has_prefix (*r, "arm64:")))
        {
          if (strncmp (*r, airlock_arch_to_string (c->arch), 5) == 0)
            g_ptr_array_add (want, (gpointer) (colon + 1));
          continue;
        }
      /* "N*line": N times. */
      {
        char *end = NULL;
        guint64 times = g_ascii_strtoull (*r, &end, 10);

        if (end != *r && *end == '*')
          {
            for (guint64 i = 0; i < times; i++)
              g_ptr_array_add (want, (gpointer) (end + 1));
            continue;
          }
      }
      g_ptr_array_add (want, (gpointer) *r);
    }
  vm_test_diff_lines (got, want, diff);
  if (diff->len > 0)
    {
      g_test_message ("console of %s %s:\n%s", airlock_arch_to_string (c->arch),
                      c->expect->command, console);
      /* Not fatal: the other behaviours still run and report. */
      g_test_fail_printf ("%s %s: the records differ from tests/guest/expected-records.h:%s",
                          airlock_arch_to_string (c->arch), c->expect->command, diff->str);
      return FALSE;
    }
  return TRUE;
}

static const AirlockEvent *
find_event (GPtrArray *events, const char *key_line)
{
  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      g_autofree char *line = airlock_event_key_line (ev);

      if (line && g_str_equal (line, key_line))
        return ev;
    }
  g_error ("no record '%s'", key_line);
  return NULL;
}

/* connect-exec: each child's connect (ports 1100-1115), made just before
 * it exec'd testprog-exec, names the binary that made it (testprog, as
 * /bin/connect-exec) and no other; each testprog-exec's (1199) names
 * testprog-exec.  Read after the exec, a record would name the binary the
 * process became (tests/guest/tree.c). */
static void
check_connect_exec (GPtrArray *events)
{
  guint execs = 0;

  for (guint port = 1100; port < 1116; port++)
    {
      g_autofree char *key = g_strdup_printf ("connect continue inet/stream/tcp 192.0.2.1:%u", port);
      const AirlockEvent *ev = find_event (events, key);

      if (!ev->exe || !g_str_has_suffix (ev->exe, "/testprog") || !ev->argv || !ev->argv[0]
          || g_strcmp0 (ev->argv[0], "/bin/connect-exec") != 0)
        g_error ("the connect to port %u names exe %s, argv[0] %s (note: %s): not the testprog "
                 "that made it", port, ev->exe ? ev->exe : "(none)",
                 ev->argv && ev->argv[0] ? ev->argv[0] : "(none)", ev->note ? ev->note : "none");
    }
  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      g_autofree char *line = airlock_event_key_line (ev);

      if (!line || !g_str_equal (line, "connect continue inet/stream/tcp 192.0.2.1:1199"))
        continue;
      if (!ev->exe || !g_str_has_suffix (ev->exe, "/testprog-exec"))
        g_error ("a connect to port 1199 names exe %s, not testprog-exec", ev->exe ? ev->exe : "(none)");
      execs++;
    }
  g_assert_cmpuint (execs, ==, 16);
}

/* sendmmsg1000: every entry recorded once, with its index, and the call's
 * count (all 1000 sent) on every one (tests/guest/inet.c). */
static void
check_mmsg_entries (GPtrArray *events)
{
  g_autofree guint *seen = g_new0 (guint, 1000);
  guint n = 0;

  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || g_strcmp0 (ev->syscall_name, "sendmmsg") != 0)
        continue;
      g_assert_true (ev->has_msg_index);
      g_assert_cmpuint (ev->msg_count, ==, 1000);
      g_assert_cmpuint (ev->msg_index, <, 1000);
      seen[ev->msg_index]++;
      g_assert_true (ev->has_result);
      g_assert_cmpint (ev->result, ==, 1000);
      n++;
    }
  g_assert_cmpuint (n, ==, 1000);
  for (guint i = 0; i < 1000; i++)
    g_assert_cmpuint (seen[i], ==, 1);
}

/* bind-flip: the port each bind recorded is the port it got ("bound
 * PORT", from getsockname), bind by bind in order, 24 of them, and both
 * ports among them (the program starts each bind on the other port), so a
 * recorder that names one port whatever was bound fails. */
static void
check_bind_flip (GPtrArray *events, GPtrArray *lines)
{
  g_autoptr (GPtrArray) recorded = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) bound = g_ptr_array_new ();
  guint n_7401 = 0;

  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      g_autofree char *line = NULL;

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || g_strcmp0 (ev->syscall_name, "bind") != 0)
        continue;
      line = airlock_event_key_line (ev);
      g_assert_nonnull (line);
      g_assert_nonnull (strrchr (line, ':'));
      g_ptr_array_add (recorded, g_strdup (strrchr (line, ':') + 1));
    }
  for (guint i = 0; i < lines->len; i++)
    if (g_str_has_prefix (lines->pdata[i], "bound "))
      g_ptr_array_add (bound, (char *) lines->pdata[i] + strlen ("bound "));
  g_assert_cmpuint (recorded->len, ==, 24);
  g_assert_cmpuint (bound->len, ==, 24);
  for (guint i = 0; i < 24; i++)
    {
      g_assert_cmpstr (recorded->pdata[i], ==, bound->pdata[i]);
      n_7401 += g_str_equal (bound->pdata[i], "7401");
    }
  g_test_message ("bind-flip: %u binds got 7401, %u got 7402", n_7401, 24 - n_7401);
  g_assert_cmpuint (n_7401, >, 0);
  g_assert_cmpuint (n_7401, <, 24);
}

/* A listener's own address: each listen and accept record of @events names
 * the socket's local address as getsockname() does, @want ("127.0.0.1:53",
 * "unix:/tmp/testprog.sock"), where the socket was bound. */
static void
check_listener_local (GPtrArray *events, const char *want)
{
  guint n = 0;

  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      g_autofree char *local = NULL;

      if (ev->kind != AIRLOCK_EVENT_SYSCALL
          || (g_strcmp0 (ev->syscall_name, "listen") != 0
              && g_strcmp0 (ev->syscall_name, "accept4") != 0))
        continue;
      g_assert_nonnull (ev->local_sa);
      local = airlock_sockaddr_to_string (ev->local_sa);
      g_assert_cmpstr (local, ==, want);
      n++;
    }
  g_assert_cmpuint (n, >, 0);
}

/* Who made each connect of `tree` (ports in tests/guest/tree.c). */
static void
check_tree_attribution (GPtrArray *events)
{
  const AirlockEvent *entry = NULL, *exec = NULL;
  const AirlockEvent *conn[6] = { NULL };
  guint32 main_pid;

  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];

      if (ev->kind != AIRLOCK_EVENT_SYSCALL || g_strcmp0 (ev->syscall_name, "execve") != 0)
        continue;
      if (g_strcmp0 (ev->path, "/bin/tree") == 0)
        entry = ev;
      else if (g_strcmp0 (ev->path, "/bin/testprog-exec") == 0)
        exec = ev;
    }
  g_assert_nonnull (entry);
  g_assert_nonnull (exec);
  g_assert_true (entry->has_pid && exec->has_pid);
  main_pid = entry->pid;
  for (guint port = 1001; port <= 1005; port++)
    {
      g_autofree char *key = g_strdup_printf ("connect continue inet/stream/tcp 192.0.2.1:%u", port);
      const AirlockEvent *ev = find_event (events, key);

      g_assert_true (ev->has_pid && ev->has_tid && ev->has_ppid);
      g_assert_nonnull (ev->exe);
      g_assert_nonnull (ev->argv);
      conn[port - 1000] = ev;
    }

  /* fork: a child of the main process. */
  g_assert_cmpuint (conn[1]->pid, !=, main_pid);
  g_assert_cmpuint (conn[1]->ppid, ==, main_pid);
  g_assert_cmpuint (conn[1]->tid, ==, conn[1]->pid);
  g_assert_true (g_str_has_suffix (conn[1]->exe, "/testprog"));
  g_assert_cmpstr (conn[1]->argv[0], ==, "/bin/tree");
  /* vfork: another child. */
  g_assert_cmpuint (conn[2]->pid, !=, main_pid);
  g_assert_cmpuint (conn[2]->pid, !=, conn[1]->pid);
  g_assert_cmpuint (conn[2]->ppid, ==, main_pid);
  /* a thread: the main process, another thread id. */
  g_assert_cmpuint (conn[3]->pid, ==, main_pid);
  g_assert_cmpuint (conn[3]->tid, !=, main_pid);
  /* exec: its own process, the other binary, the argv it was given. */
  g_assert_cmpuint (conn[4]->pid, ==, exec->pid);
  g_assert_cmpuint (conn[4]->pid, !=, main_pid);
  g_assert_cmpuint (conn[4]->ppid, ==, main_pid);
  g_assert_true (g_str_has_suffix (conn[4]->exe, "/testprog-exec"));
  g_assert_cmpstr (conn[4]->argv[0], ==, "testprog-exec");
  g_assert_cmpstr (conn[4]->argv[1], ==, "1004");
  /* the daemon: reparented away from both the main process and its own
   * (exited) parent. */
  g_assert_cmpuint (conn[5]->ppid, !=, main_pid);
  for (guint i = 1; i <= 4; i++)
    {
      g_assert_cmpuint (conn[5]->pid, !=, conn[i]->pid);
      g_assert_cmpuint (conn[5]->ppid, !=, conn[i]->pid);
    }
  g_assert_true (g_str_has_suffix (conn[5]->exe, "/testprog"));

  /* Each connect's socket was made by the same thread. */
  for (guint i = 1; i <= 5; i++)
    {
      gboolean found = FALSE;

      for (guint k = 0; k < events->len && !found; k++)
        {
          const AirlockEvent *ev = events->pdata[k];

          found = ev->kind == AIRLOCK_EVENT_SYSCALL && ev->seq < conn[i]->seq
                  && g_strcmp0 (ev->syscall_name, "socket") == 0 && ev->tid == conn[i]->tid;
        }
      if (!found)
        g_error ("no socket() record from thread %u before its connect to port %u",
                 conn[i]->tid, 1000 + i);
    }
}

/* What `env` printed: exactly our environment, our credentials, cwd and
 * hostname, stdio only, and no trace of the guest around it. */
static void
check_env (GPtrArray *lines)
{
  guint n_env = 0;

  for (guint i = 0; i < lines->len; i++)
    {
      const char *line = lines->pdata[i];

      if (strstr (line, "/airlock") || strstr (line, "vport") || strstr (line, "org.airlock"))
        g_error ("the workload sees a guest path: '%s'", line);
      if (g_str_has_prefix (line, "env "))
        {
          const char *var = line + strlen ("env ");

          if (g_str_has_prefix (var, "LD_"))
            g_error ("the workload's environment has '%s'", var);
          if (!g_strv_contains (workload_envp, var))
            g_error ("the workload's environment has '%s', which the spec does not", var);
          n_env++;
        }
      if (g_str_has_prefix (line, "fd "))
        {
          int fd = atoi (line + strlen ("fd "));

          if (fd > 2)
            g_error ("the workload starts with an open descriptor beyond stdio: '%s'", line);
        }
    }
  g_assert_cmpuint (n_env, ==, g_strv_length ((char **) workload_envp));
  g_assert_true (has_line (lines, "uid 0 euid 0 gid 0 egid 0"));
  g_assert_true (has_line (lines, "cwd /"));
  g_assert_true (has_line (lines, "hostname " HOSTNAME));
  g_assert_true (has_line (lines, "argv[0] /bin/env"));
  g_assert_true (has_line (lines, "fd 0 /dev/null"));
}

static void
test_behaviour (gconstpointer data)
{
  const Case *c = data;
  const char *arch = airlock_arch_to_string (c->arch);
  g_autoptr (AirlockVm) vm = run_command (c->arch, c->expect);
  g_autofree char *console = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  AirlockEventLog *log;
  GPtrArray *events;
  const AirlockEvent *exit_ev = NULL;

  if (!vm)
    return;
  console = console_text (vm);
  if (!airlock_vm_is_complete (vm))
    {
      g_test_message ("console:\n%s", console);
      g_test_fail_printf ("%s %s: run not complete: %s", arch, c->expect->command,
                          airlock_vm_get_reason (vm));
      return;
    }
  lines = program_lines (console, c->expect->command);
  /* A behaviour this machine cannot run (AArch32 on a CPU model without
   * it) says so and exits 77. */
  if (has_line (lines, "exit 77"))
    {
      g_autofree char *msg = g_strdup_printf ("%s %s cannot run here: %s", arch, c->expect->command,
                                              lines->len > 1 ? (const char *) lines->pdata[lines->len - 2]
                                                             : "(no reason printed)");
      g_test_skip (msg);
      return;
    }

  log = airlock_vm_get_events (vm);
  g_assert_nonnull (log);
  events = airlock_event_log_get_events (log);
  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      g_autofree char *line = airlock_event_key_line (ev);

      if (line)
        g_test_message ("%s %s: %s (pid %u tid %u ppid %u)", arch, c->expect->command, line,
                        ev->pid, ev->tid, ev->ppid);
      if (ev->kind == AIRLOCK_EVENT_WORKLOAD_EXIT)
        exit_ev = ev;
    }
  if (!assert_records (c, events, console))
    return;

  /* It ran as intended: its last line, and its wait status. */
  if (!has_line (lines, "exit 0"))
    {
      g_test_message ("console:\n%s", console);
      g_test_fail_printf ("%s %s did not run as intended (no 'exit 0' line)", arch,
                          c->expect->command);
      return;
    }
  g_assert_nonnull (exit_ev);
  g_assert_true (exit_ev->has_exit_status);
  g_assert_cmpuint (exit_ev->exit_status, ==, 0);

  if (g_str_equal (c->expect->command, "tree"))
    check_tree_attribution (events);
  if (g_str_equal (c->expect->command, "sendmmsg1000"))
    check_mmsg_entries (events);
  if (g_str_equal (c->expect->command, "connect-exec"))
    check_connect_exec (events);
  if (g_str_equal (c->expect->command, "bind-flip"))
    check_bind_flip (events, lines);
  if (g_str_equal (c->expect->command, "dns-tcp"))
    check_listener_local (events, "127.0.0.1:53");
  if (g_str_equal (c->expect->command, "unix-path"))
    check_listener_local (events, "unix:/tmp/testprog.sock");
  if (g_str_equal (c->expect->command, "unix-abstract"))
    check_listener_local (events, "unix:@airlock-testprog");
  if (g_str_equal (c->expect->command, "env"))
    check_env (lines);
  /* Its records came after an hour of guest time, in the seconds this
   * test allows a run (the warped clock). */
  if (g_str_equal (c->expect->command, "time-bomb") && !woke_after_hour (lines))
    {
      g_test_message ("console:\n%s", console);
      g_test_fail_printf ("%s time-bomb: the hour's sleep did not pass in the guest", arch);
    }
  /* And no clock the guest can read shows the host's time instead. */
  if (g_str_equal (c->expect->command, "time-bomb")
      && !has_line (lines, "the RTC kept up with the guest's clock"))
    g_test_fail_printf ("%s time-bomb: the guest's RTC did not warp with its clock", arch);
}

static gboolean
has_key_line (GPtrArray *events, const char *key_line)
{
  for (guint k = 0; k < events->len; k++)
    {
      g_autofree char *line = airlock_event_key_line (events->pdata[k]);

      if (line && g_str_equal (line, key_line))
        return TRUE;
    }
  return FALSE;
}

/* With the kernel-hook recorder's ring one page (the test mode
 * hooks-ring-min), the record of a DNS write (its payload makes it larger
 * than a page) can never be reserved.  The LSM hook (amd64) fails closed:
 * the write fails with EPERM, leaves no record and is counted in a LOG
 * line.  The kprobe (arm64: Debian 12's kernel cannot attach LSM programs,
 * docs/supervisor.md) cannot refuse it: the write goes ahead unrecorded,
 * and the trailer counts it lost, which the verdict does not pass. */
static void
test_hooks_ring_full (gconstpointer data)
{
  AirlockArch arch = GPOINTER_TO_UINT (data);
  const char *name = airlock_arch_to_string (arch);
  const char *record = "write continue inet/dgram/udp 127.0.0.1:53 dns=example.net.";
  g_autoptr (AirlockVm) vm = run_command_mode (arch, "dns-udp-write", FALSE, 0, "hooks-ring-min");
  g_autofree char *console = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  GPtrArray *events;

  if (!vm)
    return;
  console = console_text (vm);
  if (!airlock_vm_is_complete (vm))
    {
      g_test_message ("console:\n%s", console);
      g_test_fail_printf ("%s: run not complete: %s", name, airlock_vm_get_reason (vm));
      return;
    }
  lines = program_lines (console, "dns-udp-write");
  events = airlock_event_log_get_events (airlock_vm_get_events (vm));
  g_test_message ("console:\n%s", console);
  if (arch == AIRLOCK_ARCH_ARM64)
    {
      const AirlockTrailer *trailer = airlock_channel_get_trailer (airlock_vm_get_channel (vm));
      const AirlockGuestHello *hello = airlock_channel_get_hello (airlock_vm_get_channel (vm));

      g_assert_nonnull (strstr (console, "recorder: BPF kprobes on security_socket_sendmsg"));
      g_assert_cmpstr (airlock_recorder_to_string (hello->recorder), ==, "bpf-kprobe+seccomp");
      g_assert_true (has_line (lines, "write example.net A: ok (29)"));
      g_assert_false (has_key_line (events, record));
      g_assert_nonnull (strstr (console, "the kernel-hook recorder lost 1 record(s)"));
      g_assert_nonnull (trailer);
      g_assert_true (trailer->has_records_lost);
      g_assert_cmpuint (trailer->records_lost, ==, 1);
      g_assert_true (has_line (lines, "exit 0"));
      return;
    }
  g_assert_cmpstr (airlock_recorder_to_string (
                     airlock_channel_get_hello (airlock_vm_get_channel (vm))->recorder), ==,
                   "bpf-lsm+seccomp");
  g_assert_nonnull (strstr (console, "recorder: kernel hooks (BPF LSM)"));
  g_assert_true (has_line (lines, "write example.net A: errno 1 (EPERM)"));
  g_assert_false (has_key_line (events, record));
  g_assert_nonnull (strstr (console, "the kernel-hook recorder refused 1 call(s)"));
  g_assert_true (has_line (lines, "exit 0"));
}

/* The kernel-hook recorder's fallback, for a kernel without BPF LSM or BTF,
 * on the pinned kernels through the test mode hooks-off: the supervisor is
 * notified of connect, sendto and writes, and performs the calls that name
 * an inet destination itself (emulate). */
static const char *const hooks_off_sendto[] = {
  EXEC_ENTRY,
  "socket continue inet/dgram/udp -",
  "sendto emulate inet/dgram/udp 192.0.2.1:9",
  NULL,
};
static const char *const hooks_off_connected[] = {
  EXEC_ENTRY,
  "socket continue inet/dgram/udp -",
  "connect emulate inet/dgram/udp 127.0.0.1:9",
  "write continue inet/dgram/udp 127.0.0.1:9",
  "sendto continue inet/dgram/udp 127.0.0.1:9",
  NULL,
};
static const TestprogExpectation hooks_off_expectations[] = {
  { "sendto-udp4", TESTPROG_BOTH, hooks_off_sendto, FALSE },
  { "udp-connected-write", TESTPROG_BOTH, hooks_off_connected, FALSE },
};

static void
test_hooks_off (gconstpointer data)
{
  AirlockArch arch = GPOINTER_TO_UINT (data);

  for (gsize i = 0; i < G_N_ELEMENTS (hooks_off_expectations); i++)
    {
      const Case c = { arch, &hooks_off_expectations[i] };
      const char *command = c.expect->command;
      g_autoptr (AirlockVm) vm = run_command_mode (arch, command, FALSE, c.expect->vcpus, "hooks-off");
      g_autofree char *console = NULL;
      g_autoptr (GPtrArray) lines = NULL;

      if (!vm)
        return;
      console = console_text (vm);
      if (!airlock_vm_is_complete (vm))
        {
          g_test_message ("console:\n%s", console);
          g_test_fail_printf ("%s %s: run not complete: %s", airlock_arch_to_string (arch),
                              command, airlock_vm_get_reason (vm));
          return;
        }
      g_assert_cmpstr (airlock_recorder_to_string (
                         airlock_channel_get_hello (airlock_vm_get_channel (vm))->recorder), ==,
                       "seccomp");
      g_assert_nonnull (strstr (console, "the kernel-hook recorder cannot run (test mode hooks-off)"));
      if (!assert_records (&c, airlock_event_log_get_events (airlock_vm_get_events (vm)), console))
        return;
      lines = program_lines (console, command);
      g_assert_true (has_line (lines, "exit 0"));
    }
}

/* The ring filled on purpose by connects (the test mode hooks-ring-stall:
 * one page, read only at the phase's end): once it is full, the LSM hook
 * (amd64) refuses each connect with EPERM and counts it; the kprobe (arm64)
 * cannot refuse, and counts each connect it could not record as lost.
 * Either way no connect that went ahead is missing from the evidence
 * unless the trailer counts it, and no outcome either: a connect recorded
 * whose outcome found the ring full is counted lost too. */
#define STALL_CONNECTS 24

static void
test_hooks_ring_stall (gconstpointer data)
{
  AirlockArch arch = GPOINTER_TO_UINT (data);
  const char *name = airlock_arch_to_string (arch);
  const char *key = "connect continue inet/dgram/udp 192.0.2.1:9";
  g_autoptr (AirlockVm) vm = run_command_arg_mode (arch, "connect-udp4", G_STRINGIFY (STALL_CONNECTS),
                                                   FALSE, 0, "hooks-ring-stall");
  g_autofree char *console = NULL;
  g_autofree char *refused_line = NULL;
  g_autoptr (GPtrArray) lines = NULL;
  const AirlockTrailer *trailer;
  GPtrArray *events;
  guint refused = 0, went_ahead = 0, recorded = 0, with_outcome = 0;
  guint64 lost;

  if (!vm)
    return;
  console = console_text (vm);
  g_test_message ("console:\n%s", console);
  if (!airlock_vm_is_complete (vm))
    {
      g_test_fail_printf ("%s: run not complete: %s", name, airlock_vm_get_reason (vm));
      return;
    }
  g_assert_nonnull (strstr (console, "TEST MODE: the kernel-hook recorder's ring is one page, read only"));
  lines = program_lines (console, "connect-udp4");
  for (guint i = 0; i < lines->len; i++)
    if (g_str_has_prefix (lines->pdata[i], "connect: "))
      {
        if (g_str_equal (lines->pdata[i], "connect: errno 1 (EPERM)"))
          refused++;
        else
          went_ahead++;
      }
  g_assert_cmpuint (refused + went_ahead, ==, STALL_CONNECTS);
  g_assert_true (has_line (lines, "exit 0"));
  events = airlock_event_log_get_events (airlock_vm_get_events (vm));
  for (guint k = 0; k < events->len; k++)
    {
      const AirlockEvent *ev = events->pdata[k];
      g_autofree char *line = airlock_event_key_line (ev);

      if (line && g_str_equal (line, key))
        {
          recorded++;
          with_outcome += ev->has_result;
        }
    }
  trailer = airlock_channel_get_trailer (airlock_vm_get_channel (vm));
  g_assert_nonnull (trailer);
  lost = trailer->has_records_lost ? trailer->records_lost : 0;
  g_test_message ("%s: %u connects refused, %u went ahead, %u recorded (%u with their outcome), "
                  "%" G_GUINT64_FORMAT " record(s) lost", name, refused, went_ahead, recorded,
                  with_outcome, lost);
  /* The ring did fill: some connects were recorded, not all. */
  g_assert_cmpuint (recorded, >, 0);
  g_assert_cmpuint (recorded, <, STALL_CONNECTS);
  /* Every connect that went ahead unrecorded, and every recorded one
   * without its outcome, is in the trailer's count. */
  g_assert_cmpuint (lost, ==, (guint64) (went_ahead - recorded) + (recorded - with_outcome));
  if (lost > 0)
    {
      g_autofree char *lost_line = g_strdup_printf ("the kernel-hook recorder lost %" G_GUINT64_FORMAT
                                                    " record(s)", lost);

      g_assert_nonnull (strstr (console, lost_line));
    }
  if (arch == AIRLOCK_ARCH_ARM64)
    {
      /* A kprobe cannot refuse: every connect went ahead. */
      g_assert_cmpuint (refused, ==, 0);
      g_assert_cmpuint (went_ahead, ==, STALL_CONNECTS);
      g_assert_true (trailer->has_records_lost);
      return;
    }
  /* The LSM hook refused what it could not record: nothing went ahead
   * unrecorded. */
  g_assert_cmpuint (refused, >, 0);
  g_assert_cmpuint (recorded, ==, went_ahead);
  refused_line = g_strdup_printf ("the kernel-hook recorder refused %u call(s)", refused);
  g_assert_nonnull (strstr (console, refused_line));
}

/* Every behaviour has an expectation and every expectation a behaviour:
 * a program without its records would never be checked. */
static void
test_table_covers_behaviours (void)
{
  static const struct {
    const char *command;
    unsigned arches;
  } behaviours[] = {
#define BEHAVIOUR(command, function, arches) { command, arches },
    TESTPROG_BEHAVIOURS (BEHAVIOUR)
#undef BEHAVIOUR
  };

  g_assert_cmpuint (G_N_ELEMENTS (behaviours), ==, G_N_ELEMENTS (testprog_expectations));
  for (guint i = 0; i < G_N_ELEMENTS (behaviours); i++)
    {
      gboolean found = FALSE;

      for (guint j = 0; j < G_N_ELEMENTS (testprog_expectations); j++)
        if (g_str_equal (behaviours[i].command, testprog_expectations[j].command))
          {
            g_assert_cmpuint (behaviours[i].arches, ==, testprog_expectations[j].arches);
            found = TRUE;
          }
      if (!found)
        g_error ("behaviour '%s' has no expected records", behaviours[i].command);
    }
}

int
main (int argc, char **argv)
{
  static Case cases[AIRLOCK_N_ARCHES][G_N_ELEMENTS (testprog_expectations)];
  int status;

  g_test_init (&argc, &argv, NULL);
  g_assert_true (airlock_vm_adopt_qemu (NULL));

  g_test_add_func ("/supervisor/expectations/cover-every-behaviour", test_table_covers_behaviours);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    for (unsigned i = 0; i < G_N_ELEMENTS (testprog_expectations); i++)
      {
        const TestprogExpectation *e = &testprog_expectations[i];
        unsigned mask = a == AIRLOCK_ARCH_AMD64 ? TESTPROG_AMD64 : TESTPROG_ARM64;
        g_autofree char *path = NULL;

        if (!(e->arches & mask))
          continue;
        cases[a][i] = (Case) { a, e };
        path = g_strdup_printf ("/supervisor/%s/%s", airlock_arch_to_string (a), e->command);
        g_test_add_data_func (path, &cases[a][i], test_behaviour);
      }
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      g_autofree char *path = g_strdup_printf ("/supervisor/%s/hooks-ring-full",
                                               airlock_arch_to_string (a));

      g_test_add_data_func (path, GUINT_TO_POINTER (a), test_hooks_ring_full);
      g_free (path);
      path = g_strdup_printf ("/supervisor/%s/hooks-ring-stall", airlock_arch_to_string (a));
      g_test_add_data_func (path, GUINT_TO_POINTER (a), test_hooks_ring_stall);
      g_free (path);
      path = g_strdup_printf ("/supervisor/%s/hooks-off", airlock_arch_to_string (a));
      g_test_add_data_func (path, GUINT_TO_POINTER (a), test_hooks_off);
    }
  status = g_test_run ();
  vm_test_images_clear (&guest_images);
  return status;
}
